//! Accounts on the app's command line: `createsuperuser`, and the
//! pepper's line of the `check` checklist ([`install`](crate::install)
//! adds both).

use std::io::{BufRead as _, IsTerminal as _};

use tern::{
    command::{clap, BoxError, Command, Finding, Invocation},
    AppService, StatusCode,
};
use tern_data::Database;

use crate::{AuthError, Passwords};

/// The `createsuperuser` command: a superuser (staff too).
pub(crate) fn createsuperuser() -> Command {
    Command::new(
        clap::Command::new("createsuperuser")
            .about(
                "Makes a superuser (a staff account with every right in the admin). The password is asked for on the terminal (not shown), \
                 or read from the first line of standard input with --password-stdin",
            )
            .arg(
                clap::Arg::new("username")
                    .long("username")
                    .value_name("NAME")
                    .required(true)
                    .help("The account's name"),
            )
            .arg(
                clap::Arg::new("password-stdin")
                    .long("password-stdin")
                    .action(clap::ArgAction::SetTrue)
                    .help("Reads the password from standard input (for scripts)"),
            ),
        create,
    )
}

async fn create(call: Invocation) -> Result<(), BoxError> {
    let username: String = call
        .args()
        .get_one::<String>("username")
        .cloned()
        .unwrap_or_default();
    let password = if call.args().get_flag("password-stdin") {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line.trim_end_matches(['\r', '\n']).to_owned()
    } else if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let again = rpassword::prompt_password("Password (again): ")?;
        if first != again {
            return Err("the two passwords differ; nothing was made".into());
        }
        first
    } else {
        return Err(
            "standard input is not a terminal: pass the password with --password-stdin".into(),
        );
    };
    let db = call.settings::<Database>()?;
    let passwords = call.settings::<Passwords>()?;
    let made = crate::NewUser::new(&username, &password)
        .superuser(true)
        .create(db.pool(), &passwords)
        .await;
    db.pool().close().await;
    match made {
        Ok(user) => {
            println!(
                "made the superuser `{}` (staff, every right; id {})",
                user.username, user.id
            );
            Ok(())
        }
        Err(AuthError::Data(e)) if e.status() == StatusCode::CONFLICT => {
            Err(format!("the account `{username}` exists already").into())
        }
        Err(AuthError::Data(e)) => Err(format!(
            "{e} (are the accounts' tables there? run the `migrate` command first)"
        )
        .into()),
        Err(e) => Err(e.to_string().into()),
    }
}

/// `check`: a pepper in use must be set.
pub(crate) async fn check(app: AppService) -> Vec<Finding> {
    let (Some(db), Some(passwords)) = (app.settings::<Database>(), app.settings::<Passwords>())
    else {
        return Vec::new();
    };
    let line = match crate::check_pepper(db.pool(), &passwords).await {
        Ok(()) if passwords.pepper.is_some() => Finding::ok("PASSWORD_PEPPER", "set"),
        Ok(()) => Finding::ok(
            "PASSWORD_PEPPER",
            "not set (optional; no stored hash needs one)",
        ),
        Err(AuthError::Internal(message)) => Finding::fail("PASSWORD_PEPPER", message),
        Err(e) => Finding::warn(
            "PASSWORD_PEPPER",
            format!("could not be checked against the accounts: {e}"),
        ),
    };
    vec![line]
}

/// At start: a pepper in use must be set ([`check_pepper`](crate::check_pepper)).
/// A database without the accounts' table yet (production, before
/// `migrate`) is logged, not refused: `check` names it.
pub(crate) async fn pepper_at_start(app: AppService) -> Result<(), BoxError> {
    if let (Some(db), Some(passwords)) = (app.settings::<Database>(), app.settings::<Passwords>()) {
        match crate::check_pepper(db.pool(), &passwords).await {
            Err(AuthError::Data(e)) => tracing::warn!(
                error = %e,
                "PASSWORD_PEPPER could not be checked against the accounts (run the `migrate` command?)"
            ),
            other => other?,
        }
    }
    Ok(())
}
