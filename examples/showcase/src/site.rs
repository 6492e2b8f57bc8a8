//! Tern's website, served by Tern: the home page (rendered from templates
//! on every request), the docs from the repository's Markdown (rendered
//! once, at the first request after start), `/index.json`, `sitemap.xml`.

use std::sync::OnceLock;

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use tern::{
    extract::{Host, Path},
    http::header,
    IntoResponse, Json, Problem, Response, StatusCode,
};
use tern_site::Page;

/// Where the repository's files are linked when a page names one that is
/// not a page of the site.
const REPOSITORY: &str = "https://example.invalid/tern/blob/main";

/// A docs page: its path under `/guide/`, its source in the repository,
/// its Markdown (compiled in, so a moved binary still has it).
struct Source {
    slug: &'static str,
    title: &'static str,
    file: &'static str,
    markdown: &'static str,
}

const SOURCES: &[Source] = &[
    Source {
        slug: "guide",
        title: "The guide",
        file: "crates/tern/src/docs/guide.md",
        markdown: include_str!("../../../crates/tern/src/docs/guide.md"),
    },
    Source {
        slug: "configuration",
        title: "Configuration",
        file: "docs/configuration.md",
        markdown: include_str!("../../../docs/configuration.md"),
    },
    Source {
        slug: "hardening",
        title: "Hardening",
        file: "docs/hardening.md",
        markdown: include_str!("../../../docs/hardening.md"),
    },
    Source {
        slug: "performance",
        title: "Performance",
        file: "PERFORMANCE.md",
        markdown: include_str!("../../../PERFORMANCE.md"),
    },
    Source {
        slug: "roadmap",
        title: "Roadmap",
        file: "ROADMAP.md",
        markdown: include_str!("../../../ROADMAP.md"),
    },
];

/// A docs page, rendered.
pub(crate) struct Doc {
    pub(crate) slug: &'static str,
    pub(crate) title: &'static str,
    pub(crate) summary: String,
    pub(crate) html: String,
}

/// Every docs page, rendered once.
pub(crate) fn docs() -> &'static [Doc] {
    static DOCS: OnceLock<Vec<Doc>> = OnceLock::new();
    DOCS.get_or_init(|| SOURCES.iter().map(render).collect())
}

/// Markdown to HTML: rustdoc's hidden lines (`# ` in Rust code blocks)
/// dropped, links to other docs pages made site links, links to other
/// files of the repository made links to the repository.
fn render(source: &Source) -> Doc {
    let markdown = hide_rustdoc_lines(source.markdown);
    let parser = Parser::new_ext(
        &markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    let dir = source.file.rsplit_once('/').map_or("", |(d, _)| d);
    let mut summary = String::new();
    let mut in_first_paragraph = false;
    let mut seen_paragraph = false;
    let events: Vec<Event<'_>> = highlight_code(parser)
        .map(|event| match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => Event::Start(Tag::Link {
                link_type,
                dest_url: rewrite_link(&dest_url, dir),
                title,
                id,
            }),
            other => other,
        })
        .inspect(|event| match event {
            Event::Start(Tag::Paragraph) if !seen_paragraph => {
                in_first_paragraph = true;
                seen_paragraph = true;
            }
            Event::End(TagEnd::Paragraph) => in_first_paragraph = false,
            Event::Text(t) | Event::Code(t) if in_first_paragraph => summary.push_str(t),
            Event::SoftBreak if in_first_paragraph => summary.push(' '),
            _ => {}
        })
        .collect();
    let mut html_out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut html_out, events.into_iter());
    // Code blocks and tables may scroll sideways: keyboard users reach
    // them (WCAG 2.1.1; axe's scrollable-region-focusable).
    let html_out = html_out
        .replace("<pre>", "<pre tabindex=\"0\">")
        .replace("<table>", "<table tabindex=\"0\">");
    Doc {
        slug: source.slug,
        title: source.title,
        summary: shorten(&summary, 200),
        html: html_out,
    }
}

fn rewrite_link<'a>(dest: &str, dir: &str) -> CowStr<'a> {
    if dest.starts_with("http://")
        || dest.starts_with("https://")
        || dest.starts_with('#')
        || dest.starts_with("mailto:")
    {
        return CowStr::from(dest.to_owned());
    }
    let (path, fragment) = dest.split_once('#').map_or((dest, ""), |(p, f)| (p, f));
    let joined = if dir.is_empty() || path.starts_with('/') {
        path.trim_start_matches('/').to_owned()
    } else {
        format!("{dir}/{path}")
    };
    let joined = normalize(&joined);
    let fragment = if fragment.is_empty() {
        String::new()
    } else {
        format!("#{fragment}")
    };
    match SOURCES.iter().find(|s| s.file == joined) {
        Some(s) => CowStr::from(format!("/guide/{}{fragment}", s.slug)),
        None => CowStr::from(format!("{REPOSITORY}/{joined}{fragment}")),
    }
}

/// Fenced code blocks as highlighted HTML (syntect's classes, `hl-`
/// prefixed, coloured by `site.css`); a language syntect does not know
/// (TOML, nginx, text) stays plain. Done once per page, at render.
fn highlight_code<'a>(events: impl Iterator<Item = Event<'a>>) -> impl Iterator<Item = Event<'a>> {
    use pulldown_cmark::CodeBlockKind;
    let mut out = Vec::new();
    let mut code: Option<(String, String)> = None;
    for event in events {
        match (&mut code, event) {
            (None, Event::Start(Tag::CodeBlock(kind))) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split(',').next().unwrap_or("").trim().to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            (Some((_, text)), Event::Text(t)) => text.push_str(&t),
            (Some(_), Event::End(TagEnd::CodeBlock)) => {
                if let Some((lang, text)) = code.take() {
                    out.push(Event::Html(CowStr::from(highlighted(&lang, &text))));
                }
            }
            (_, other) => out.push(other),
        }
    }
    out.into_iter()
}

/// One code block as `<pre><code>` with highlighted spans.
fn highlighted(lang: &str, code: &str) -> String {
    use syntect::{
        html::{ClassStyle, ClassedHTMLGenerator},
        parsing::SyntaxSet,
        util::LinesWithEndings,
    };
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    let syntaxes = SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines);
    let extension = match lang {
        "" | "rust" | "no_run" | "ignore" | "compile_fail" | "should_panic" => Some("rs"),
        "sh" | "bash" | "shell" | "console" => Some("sh"),
        "json" => Some("json"),
        "html" => Some("html"),
        "python" | "py" => Some("py"),
        "js" | "javascript" | "mjs" => Some("js"),
        "yaml" | "yml" => Some("yaml"),
        _ => None,
    };
    let class = if lang.is_empty() { "rust" } else { lang };
    let class: String = class
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let body = extension
        .and_then(|ext| syntaxes.find_syntax_by_extension(ext))
        .and_then(|syntax| {
            let mut html = ClassedHTMLGenerator::new_with_class_style(
                syntax,
                syntaxes,
                ClassStyle::SpacedPrefixed { prefix: "hl-" },
            );
            for line in LinesWithEndings::from(code) {
                html.parse_html_for_line_which_includes_newline(line).ok()?;
            }
            Some(html.finalize())
        })
        .unwrap_or_else(|| escape_html(code));
    format!("<pre tabindex=\"0\"><code class=\"language-{class}\">{body}</code></pre>\n")
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// `a/b/../c` to `a/c`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Drops the lines rustdoc hides (`# ` at the start) in Rust code blocks.
fn hide_rustdoc_lines(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut in_fence = false;
    let mut in_rust = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if in_fence {
                in_fence = false;
                in_rust = false;
            } else {
                in_fence = true;
                let lang = info.split(',').next().unwrap_or("").trim();
                in_rust = lang.is_empty()
                    || lang == "rust"
                    || lang == "no_run"
                    || lang == "ignore"
                    || lang == "compile_fail";
            }
        } else if in_rust && (trimmed == "#" || trimmed.starts_with("# ")) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end].rfind(' ').unwrap_or(end);
    format!("{}...", &text[..cut])
}

/// The roadmap's "Works today" list, as (name, text) pairs: what the home
/// page's longest section shows, rendered by the template per request.
pub(crate) fn works_today() -> &'static [(String, String)] {
    static ITEMS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    ITEMS.get_or_init(|| {
        let roadmap = include_str!("../../../ROADMAP.md");
        let section = roadmap
            .split("\n## ")
            .find(|s| s.starts_with("Works today"))
            .unwrap_or("");
        let mut items: Vec<(String, String)> = Vec::new();
        for line in section.lines().skip(1) {
            if let Some(item) = line.strip_prefix("- ") {
                let (name, text) = match item.strip_prefix("**").and_then(|r| r.split_once("**")) {
                    Some((name, rest)) => (
                        name.to_owned(),
                        rest.trim_start_matches(':').trim().to_owned(),
                    ),
                    None => (String::new(), item.to_owned()),
                };
                items.push((name, text));
            } else if let (Some(last), true) = (items.last_mut(), line.starts_with("  ")) {
                last.1.push(' ');
                last.1.push_str(line.trim());
            }
        }
        items
    })
}

/// A thing Tern does, for the home page.
pub(crate) struct Feature {
    pub(crate) name: &'static str,
    pub(crate) text: &'static str,
}

/// A row of the home page's performance table.
pub(crate) struct Figure {
    pub(crate) workload: &'static str,
    pub(crate) figure: &'static str,
    pub(crate) source: &'static str,
}

/// The files of `static/`: embedded in release builds (a moved binary
/// still has them), read from the folder in debug builds (edits show
/// without a rebuild).
#[derive(rust_embed::RustEmbed)]
#[folder = "static/"]
struct Assets;

/// The site's static files.
pub(crate) fn files() -> &'static tern_site::StaticFiles {
    static FILES: OnceLock<tern_site::StaticFiles> = OnceLock::new();
    FILES.get_or_init(tern_site::StaticFiles::embedded::<Assets>)
}

/// The stylesheet's fingerprinted URL.
fn css() -> String {
    files().url("site.css")
}

/// The home page: the template assembles it on every request; its
/// constant text (the features, figures, roadmap items, docs and routes,
/// about 20 KB) is HTML-escaped once, at the first request, and marked
/// safe in the template. Escaping it again on every request was 37% of
/// the page's server time (`bench/results/2026-12-01-site/profile.txt`).
/// Anything that comes from a request would still be escaped per request.
#[derive(askama::Template)]
#[template(path = "home.html")]
pub(crate) struct Home {
    pub(crate) css: String,
    pub(crate) text: &'static HomeText,
}

/// The home page's constant text, escaped: `(name, text)` pairs and so on.
pub(crate) struct HomeText {
    pub(crate) features: Vec<(String, String)>,
    pub(crate) figures: Vec<(String, String, String)>,
    pub(crate) works: Vec<(String, String)>,
    pub(crate) docs: Vec<(String, String, String)>,
    pub(crate) routes: Vec<(String, String, String)>,
}

fn home_text() -> &'static HomeText {
    static TEXT: OnceLock<HomeText> = OnceLock::new();
    TEXT.get_or_init(|| {
        let e = |s: &str| escape_html(s);
        HomeText {
            features: crate::content::FEATURES
                .iter()
                .map(|f| (e(f.name), e(f.text)))
                .collect(),
            figures: crate::content::FIGURES
                .iter()
                .map(|f| (e(f.workload), e(f.figure), e(f.source)))
                .collect(),
            works: works_today()
                .iter()
                .map(|(name, text)| (e(name), e(text)))
                .collect(),
            docs: docs()
                .iter()
                .map(|d| (e(d.slug), e(d.title), e(&d.summary)))
                .collect(),
            routes: crate::content::ROUTES
                .iter()
                .map(|(href, route, what)| (e(href), e(route), e(what)))
                .collect(),
        }
    })
}

#[derive(askama::Template)]
#[template(path = "doc.html")]
pub(crate) struct DocPage {
    pub(crate) css: String,
    pub(crate) doc: &'static Doc,
    pub(crate) docs: &'static [Doc],
}

#[derive(askama::Template)]
#[template(path = "guide.html")]
pub(crate) struct GuideIndex {
    pub(crate) css: String,
    pub(crate) docs: &'static [Doc],
}

/// `GET /`: rendered on every request.
pub(crate) async fn home() -> Page<Home> {
    Page(Home {
        css: css(),
        text: home_text(),
    })
}

/// `GET /guide`: the docs pages.
pub(crate) async fn guide() -> Page<GuideIndex> {
    Page(GuideIndex {
        css: css(),
        docs: docs(),
    })
}

/// `GET /guide/{slug}`.
pub(crate) async fn doc(Path(slug): Path<String>) -> Result<Page<DocPage>, Problem> {
    match docs().iter().find(|d| d.slug == slug) {
        Some(doc) => Ok(Page(DocPage {
            css: css(),
            doc,
            docs: docs(),
        })),
        None => Err(Problem::new(StatusCode::NOT_FOUND).with_detail(format!(
            "there is no docs page `{slug}`; see /guide for the list"
        ))),
    }
}

#[derive(Serialize)]
struct Entry {
    title: String,
    path: String,
    summary: String,
}

/// The site's pages: path, title, summary (made once; `/index.json`
/// serializes them on every request).
fn pages() -> &'static [Entry] {
    static PAGES: OnceLock<Vec<Entry>> = OnceLock::new();
    PAGES.get_or_init(all_pages)
}

fn all_pages() -> Vec<Entry> {
    let mut pages = vec![
        Entry {
            title: "Tern".to_owned(),
            path: "/".to_owned(),
            summary: "A web framework for Rust with its numbers measured in the open, serving its own website."
                .to_owned(),
        },
        Entry {
            title: "Docs".to_owned(),
            path: "/guide".to_owned(),
            summary: "The guide, the configuration, hardening, performance and the roadmap."
                .to_owned(),
        },
    ];
    pages.extend(docs().iter().map(|d| Entry {
        title: d.title.to_owned(),
        path: format!("/guide/{}", d.slug),
        summary: d.summary.clone(),
    }));
    pages.extend([
        Entry {
            title: "Chat".to_owned(),
            path: "/chat".to_owned(),
            summary: "A chat with presence over WebSockets and server-sent events.".to_owned(),
        },
        Entry {
            title: "Notes".to_owned(),
            path: "/notes".to_owned(),
            summary: "Notes in a database, behind a login.".to_owned(),
        },
        Entry {
            title: "API docs".to_owned(),
            path: "/docs".to_owned(),
            summary: "The contract API's reference, from its OpenAPI document.".to_owned(),
        },
    ]);
    pages
}

/// `GET /index.json`: the pages, rendered per request.
pub(crate) async fn index_json() -> Json<Index> {
    Json(Index { pages: pages() })
}

/// `/index.json`'s body.
#[derive(Serialize)]
pub(crate) struct Index {
    pages: &'static [Entry],
}

/// `GET /sitemap.xml`: every page, as absolute URLs on the host asked.
pub(crate) async fn sitemap(Host(host): Host) -> Response {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for page in pages() {
        xml.push_str("  <url><loc>http://");
        xml.push_str(&escape_xml(&host));
        xml.push_str(&escape_xml(&page.path));
        xml.push_str("</loc></url>\n");
    }
    xml.push_str("</urlset>\n");
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        xml,
    )
        .into_response()
}

fn escape_xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
