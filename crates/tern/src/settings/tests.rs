use super::*;
use crate::config::{FileTables, Sources};

#[derive(Debug, Deserialize)]
struct Shop {
    token: Secret,
    #[serde(default)]
    page_size: u32,
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default)]
    limits: BTreeMap<String, u64>,
}

/// A configuration read from these variables and `tern.toml` text.
fn config(vars: &[(&str, &str)], toml: &str) -> Config {
    let mut c = Config::from_settings(vars.iter().copied()).expect("config");
    let table: toml::Table = toml.parse().expect("toml");
    let tables = table
        .into_iter()
        .filter_map(|(k, v)| match v {
            toml::Value::Table(t) => Some((k, t)),
            _ => None,
        })
        .collect();
    c.sources = Sources {
        vars: Arc::clone(&c.sources.vars),
        file: Some(Arc::new(FileTables {
            path: "tern.toml".into(),
            tables,
        })),
    };
    c
}

fn err(vars: &[(&str, &str)], toml: &str) -> String {
    load::<Shop>("shop", &config(vars, toml))
        .expect_err("refused")
        .to_string()
}

/// A `Deserialize` that panics mid-load must not leave the thread
/// loading "for production" (the flag is ambient state: issue 26).
#[test]
fn a_panicking_load_leaves_no_production_flag_behind() {
    struct Boom;
    impl<'de> Deserialize<'de> for Boom {
        fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
            // The load probes the type's fields first, outside the
            // flag: only the load itself panics.
            if loading_for_production() {
                panic!("a settings type that panics");
            }
            Err(serde::de::Error::custom("probed"))
        }
    }
    let production = config(&[], "").production();
    let load = std::panic::catch_unwind(|| load::<Boom>("boom", &production));
    assert!(load.is_err());
    assert!(!loading_for_production());
}

#[test]
fn the_environment_overrides_the_table() {
    let c = config(
        &[("SHOP_PAGE_SIZE", "50"), ("SHOP_HOSTS", "a.com, b.com")],
        "[shop]\ntoken = \"from-the-file\"\npage_size = 10\nlimits = { burst = 5 }\n",
    );
    let s: Shop = load("shop", &c).expect("load");
    assert_eq!(s.token.expose(), "from-the-file");
    assert_eq!(s.page_size, 50);
    assert_eq!(s.hosts, ["a.com", "b.com"]);
    assert_eq!(s.limits["burst"], 5);
    // A TOML array too.
    let c = config(&[], "[shop]\ntoken = \"t\"\nhosts = [\"x.com\"]\n");
    assert_eq!(load::<Shop>("SHOP", &c).expect("load").hosts, ["x.com"]);
}

#[test]
fn mistakes_name_the_variable() {
    for (vars, toml, expected) in [
        (&[][..], "", "SHOP_TOKEN: is not set; set the variable, or `token` under [shop] in tern.toml"),
        (&[("SHOP_TOKEN", "t"), ("SHOP_PAGE_SIZ", "5")][..], "",
         "SHOP_PAGE_SIZ: is not a setting of the app's `Shop` ([shop]); did you mean `page_size` (SHOP_PAGE_SIZE)?"),
        (&[("SHOP_TOKEN", "t"), ("SHOP_COLOUR", "red")][..], "",
         "SHOP_COLOUR: is not a setting of the app's `Shop` ([shop]); its fields are `token`, `page_size`, `hosts`, `limits`"),
        (&[("SHOP_TOKEN", "t"), ("SHOP_PAGE_SIZE", "many")][..], "",
         "SHOP_PAGE_SIZE: expected a non-negative 32-bit integer, got `many`"),
        (&[][..], "[shop]\ntoken = \"t\"\ncolor = 1\n",
         "`color` in [shop] of tern.toml: is not a setting"),
        (&[][..], "[shop]\ntoken = \"t\"\nlimits = { burst = \"x\" }\n",
         "`limits` in [shop] of tern.toml: at `[burst]`: expected a non-negative integer, got `x`"),
    ] {
        let e = err(vars, toml);
        assert!(e.starts_with(expected), "{e}\nexpected: {expected}");
    }
}

#[test]
fn defaults_fill_only_what_no_source_sets() {
    let shop = [Registration::of::<Shop>("shop")];
    let defaults = [
        ("SHOP_TOKEN".to_owned(), "default-token".to_owned()),
        ("SHOP_PAGE_SIZE".to_owned(), "7".to_owned()),
    ];
    let loaded = |c: &Config| {
        let c = with_defaults(c, &defaults, &shop).expect("claimed");
        load::<Shop>("shop", &c).expect("load")
    };
    let s = loaded(&config(&[], ""));
    assert_eq!((s.token.expose(), s.page_size), ("default-token", 7));
    // A variable wins, and so does the file.
    let s = loaded(&config(
        &[("SHOP_PAGE_SIZE", "9")],
        "[shop]\ntoken = \"from-file\"\n",
    ));
    assert_eq!((s.token.expose(), s.page_size), ("from-file", 9));
    // A name no registered prefix claims is refused, naming it.
    let e = with_defaults(
        &config(&[], ""),
        &[("SHOPP_TOKEN".to_owned(), "x".to_owned())],
        &shop,
    )
    .expect_err("refused")
    .to_string();
    assert!(e.starts_with("SHOPP_TOKEN: is given a default"), "{e}");
}

#[test]
fn unclaimed_tables_and_bad_prefixes_are_refused() {
    // A misspelt table is named as such, not as a missing token.
    let c = config(&[], "[shop]\npage_size = 1\n[shopp]\ntoken = \"t\"\n");
    let e = AppSettings::load(&[Registration::of::<Shop>("shop")], &c)
        .err()
        .expect("refused")
        .to_string();
    assert_eq!(
        e,
        "tern.toml: unknown table [shopp] in tern.toml: did you mean [shop]? the app's \
         settings tables are [shop] \
         (with `App::settings`); Tern's own settings go at the top of the file, outside any table"
    );
    for bad in ["", "tern", "9lives", "my-app", "app_"] {
        assert!(load::<Shop>(bad, &c).is_err(), "{bad}");
    }
    let twice = [
        Registration::of::<Shop>("shop"),
        Registration::of::<Shop>("store"),
    ];
    let c = config(&[("SHOP_TOKEN", "t"), ("STORE_TOKEN", "t")], "");
    assert!(AppSettings::load(&twice, &c).is_err());
}

#[test]
fn secrets_are_never_printed_and_production_refuses_examples() {
    let c = config(
        &[
            ("SHOP_TOKEN", "hunter2-but-longer"),
            ("SHOP_PAGE_SIZE", "x"),
        ],
        "",
    );
    let e = err(
        &[
            ("SHOP_TOKEN", "hunter2-but-longer"),
            ("SHOP_PAGE_SIZE", "x"),
        ],
        "",
    );
    assert!(!e.contains("hunter2"), "{e}");
    let mut ok = c.clone();
    ok.sources.vars = Arc::new([("SHOP_TOKEN".to_owned(), "hunter2-but-longer".to_owned())].into());
    let s: Shop = load("shop", &ok).expect("load");
    assert_eq!(format!("{s:?}").matches("hunter2").count(), 0, "{s:?}");
    assert!(s.token.matches("hunter2-but-longer"));
    assert!(!s.token.matches("hunter2-but-longe"));
    assert!(format!("{:?}", c.sources).find("hunter2").is_none());

    for weak in ["changeme", "short-token"] {
        let mut prod = config(&[("SHOP_TOKEN", weak)], "").production();
        prod.sources.vars = Arc::new([("SHOP_TOKEN".to_owned(), weak.to_owned())].into());
        let e = load::<Shop>("shop", &prod).expect_err(weak).to_string();
        assert!(
            e.starts_with("SHOP_TOKEN: is an example value or shorter than 16 bytes"),
            "{e}"
        );
        assert!(!e.contains(weak), "{e}");
        // Development takes it.
        let dev = config(&[("SHOP_TOKEN", weak)], "");
        assert!(load::<Shop>("shop", &dev).is_ok());
    }
}

#[tokio::test]
async fn an_app_that_loads_no_t_for_a_settings_t_handler_does_not_build() {
    async fn page(Settings(s): Settings<Shop>) -> String {
        s.page_size.to_string()
    }
    // On a plain route, under a host pattern, and after other methods.
    let apps = [
        crate::App::new().route("/shop/{id}", crate::routing::get(page)),
        crate::App::new().host("{t}.example.com", |t| {
            t.route("/shop/{id}", crate::routing::get(page))
        }),
        crate::App::new().route(
            "/shop/{id}",
            crate::routing::post(|| async { "ok" }).put(page),
        ),
    ];
    for app in apps {
        let e = app.build().expect_err("builds without Shop").to_string();
        assert!(e.contains("route `/shop/{id}"), "{e}");
        assert!(
            e.contains("takes `Settings<Shop>` but the app loads no `Shop`: add `.settings::<Shop>(\"prefix\")`"),
            "{e}"
        );
    }
    let app = crate::App::new()
        .settings::<Shop>("shop")
        .route("/", crate::routing::get(page))
        .config(config(&[("SHOP_TOKEN", "t"), ("SHOP_PAGE_SIZE", "7")], ""));
    let res = crate::test::TestClient::new(app).get("/").send().await;
    assert_eq!(res.text(), "7");
}
