//! A chat with presence: `/chat` (the page), `/chat/socket` (the
//! channel protocol of `tern_realtime::channels` over a WebSocket) and
//! `/chat/events` (the same room as server-sent events, read-only).
//!
//! A logged-in user chats under their name; a visitor picks a guest name
//! (`/chat?name=ada`). One room, `chat:lobby`; with `REALTIME_BACKEND`
//! set to `redis` or `nats` every showcase process shares it.

use serde::Deserialize;
use tern::{
    extract::{Query, Settings},
    response::Html,
    IntoResponse, Problem, Response, StatusCode,
};
use tern_realtime::{sse::EventStream, Channels, Member, Realtime, WebSocketUpgrade};

/// The one room.
pub(crate) const ROOM: &str = "chat:lobby";

/// The longest guest name, in characters.
const MAX_NAME: usize = 32;

/// `GET /chat`: the page; its script and stylesheet are files (the
/// production CSP allows no inline ones), linked by their fingerprinted
/// URLs, filled in once.
pub(crate) async fn page() -> Html<&'static str> {
    static PAGE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    Html(PAGE.get_or_init(|| {
        let files = crate::site::files();
        include_str!("chat.html")
            .replace("{css}", &files.url("pages.css"))
            .replace("{js}", &files.url("chat.js"))
    }))
}

#[derive(Deserialize)]
pub(crate) struct Guest {
    name: Option<String>,
}

/// Who holds a socket: the session's user, or a guest by a good name.
fn member(user: Option<tern_auth::User>, guest: Option<String>) -> Option<Member> {
    if let Some(user) = user {
        return Some(Member::new(format!("user:{}", user.id), user.username));
    }
    let name = guest.unwrap_or_default();
    let name = name.trim();
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '_');
    ok.then(|| Member::new(format!("guest:{name}"), format!("{name} (guest)")))
}

pub(crate) async fn socket(
    ws: WebSocketUpgrade,
    user: Option<tern_auth::User>,
    Query(guest): Query<Guest>,
    Settings(realtime): Settings<Realtime>,
) -> Response {
    let Some(member) = member(user, guest.name) else {
        return Problem::new(StatusCode::BAD_REQUEST)
            .with_detail(format!(
                "log in, or pick a guest name (`?name=`): 1 to {MAX_NAME} letters, digits, \
                 spaces, `-` or `_`"
            ))
            .into_response();
    };
    let channels = Channels::new(realtime.hub())
        .authorize(|member, topic, _| member.is_some() && topic == ROOM);
    ws.on_upgrade(move |socket| async move { channels.serve(socket, Some(member)).await })
}

pub(crate) async fn events(
    events: EventStream,
    Settings(realtime): Settings<Realtime>,
) -> Response {
    events.follow(realtime.hub(), &[ROOM], None)
}
