// The admin at /admin/ in a real browser, as staff use it, with no
// script of the admin's own (it has none):
// - as `admin` (a superuser): the login page (a wrong password first),
//   with the keyboard (the skip link is the first stop); the dashboard; a note added with an
//   empty text is a 422 whose error summary has the focus and whose link
//   moves it to the field (screenshot target/screenshots/
//   admin-form-errors.png); fixed and saved, edited, found by a search,
//   sorted both ways (aria-sort), filtered when the list has a filter
//   (screenshot target/screenshots/admin-list.png), deleted in bulk
//   through the confirmation page; each change has its entry in the log;
//   a missing row (404), a bad list parameter (400) and a page past the
//   end are pages too; a POST without csrf_token to any admin form is
//   403 and changes nothing; logout;
// - a staff user with `view` on the notes only (made and granted on the
//   admin's users and permissions pages): no
//   checkbox, no Add link, no edit form, and a forged POST with a valid
//   CSRF token is 403 with the note unchanged.
// axe-core runs on every admin page the script opens: no serious or
// critical violation (each violation found is printed in full). No
// Content Security Policy violation is reported (run against production
// settings too: `default-src 'self'`).
//
//   node admin.mjs http://127.0.0.1:PORT [password of `admin`]
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import { fail, launch } from "./lib.mjs";

const require = createRequire(import.meta.url);
// axe-core's source, evaluated through the DevTools protocol: a <script>
// tag would be refused by the production CSP, which the run keeps on.
const axeSource = readFileSync(require.resolve("axe-core"), "utf8");
const base = process.argv[2];
const password = process.argv[3] || "tern-showcase";
const admin = base + "/admin";
// Texts of this run's notes: the database may hold earlier runs' rows.
const run = "run" + Date.now().toString(36);
const shots = "target/screenshots";
mkdirSync(shots, { recursive: true });

const problems = [];
const checked = [];

// A page that reports script errors, dialogs and CSP violations.
const watched = async (context) => {
  const page = await context.newPage();
  page.on("pageerror", (e) => problems.push("page: " + e.message));
  page.on("dialog", (d) => { problems.push("a dialog opened: " + d.message()); d.dismiss(); });
  page.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push("console: " + m.text());
  });
  // A CSP violation fires an event in the page whether or not the
  // console shows it.
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error("Content Security Policy: refused " + e.violatedDirective + " " + e.blockedURI));
  });
  return page;
};

// axe-core on the page as it is: every violation printed in full, a
// serious or critical one fails the run.
const axe = async (page, what) => {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(axeSource);
  const result = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
  const where = what + " (" + new URL(page.url()).pathname + ")";
  for (const v of result.violations) {
    console.error(`axe: ${where}: ${v.id} (${v.impact}): ${v.help} (${v.helpUrl})`);
    for (const n of v.nodes) console.error("  at " + n.target.join(" ") + "\n    " + n.html + "\n    " + n.failureSummary.replace(/\n/g, "\n    "));
  }
  const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  if (bad.length > 0) fail(where + ": " + bad.map((v) => v.id + " (" + v.impact + ")").join(", "));
  checked.push(what);
};

// Runs `action`, which navigates; the answer must have `status`, and
// the page it shows is checked with axe-core.
const go = async (page, what, status, action) => {
  const [res] = await Promise.all([page.waitForNavigation(), action()]);
  if (!res) fail(what + ": no navigation");
  if (res.status() !== status) fail(`${what}: ${res.status()} (not ${status}) at ${res.url()}: ${(await page.textContent("main").catch(() => "")).trim().slice(0, 300)}`);
  await axe(page, what);
  return res;
};
const open = (page, what, path, status = 200) => go(page, what, status, () => page.goto(admin + path));

// What has the keyboard focus: its tag, id, name and text.
const focused = (page) =>
  page.evaluate(() => {
    const e = document.activeElement;
    return { tag: e.tagName.toLowerCase(), id: e.id, cls: e.className, name: e.getAttribute("name") || "",
      href: e.getAttribute("href") || "", text: e === document.body ? "" : (e.textContent || "").trim().slice(0, 60) };
  });
const describe = (f) => `<${f.tag}${f.id ? " id=" + f.id : ""}${f.name ? " name=" + f.name : ""}${f.href ? " href=" + f.href : ""}> ${f.text}`;

// Loads the page afresh and presses Tab until each of `wants` (CSS
// selectors) has had the focus, at most `limit` times; the first stop
// must be the skip link.
const tabThrough = async (page, what, wants, limit = 60) => {
  await page.reload();
  const left = new Set(wants);
  const stops = [];
  for (let i = 0; i < limit && left.size > 0; i++) {
    await page.keyboard.press("Tab");
    const f = await focused(page);
    stops.push(describe(f));
    if (i === 0 && !/skip-link/.test(f.cls)) fail(what + ": the first Tab stop is " + describe(f) + ", not the skip link");
    for (const want of left) {
      if (await page.evaluate((sel) => document.activeElement.matches(sel), want)) left.delete(want);
    }
  }
  if (left.size > 0) fail(`${what}: ${[...left].join(", ")} not reached in ${limit} Tab presses: ${stops.join(" | ")}`);
};

// The notes' texts in the list's order.
const listed = (page) => page.$$eval("main table tbody th[scope=row]", (ths) => ths.map((t) => t.textContent.trim()));
// The rows of the log (when, who, model, row, change) as text.
const logRows = (page) =>
  page.$$eval("main table tbody tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
// The session's CSRF token, from the logout form every admin page has.
const csrfOf = (page) => page.$eval("form.logout input[name=csrf_token]", (i) => i.value);
// A note's text, read through the admin's edit page (or the read-only
// page of a viewer) with `page`'s session.
const noteText = async (page, id) => {
  const res = await page.request.get(`${admin}/notes/${id}`);
  if (res.status() !== 200) fail(`GET /admin/notes/${id} answered ${res.status()}`);
  const html = await res.text();
  const m = html.match(/<textarea id="field-text" name="text"[^>]*>([^<]*)<\/textarea>/) ||
    html.match(/<dt>Text<\/dt><dd>([^<]*)<\/dd>/);
  if (!m) fail(`no text on /admin/notes/${id}: ${html.slice(0, 500)}`);
  return m[1].replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&#38;|&amp;/g, "&");
};

// Logs `user` in through the admin's login page (after a `wrong`
// password, when given), with the keyboard: Tab to the skip link, Enter,
// Tab to the username, type, Tab, type, Enter.
const logIn = async (page, user, pass, wrong) => {
  await go(page, "the login page, as the dashboard's redirect", 200, () => page.goto(admin + "/"));
  if (!page.url().startsWith(admin + "/login?next=")) fail("/admin/ did not send to the login page: " + page.url());
  const width = await page.$eval("main", (m) => getComputedStyle(m).maxWidth);
  if (width === "none") fail("the login page has no style (admin.css not applied)");
  if (wrong) {
    // A wrong password: the same page, with the error announced.
    await page.fill("#username", user);
    await page.fill("#password", wrong);
    await go(page, "the login page with an error", 200, () => page.click("main button[type=submit]"));
    if (!/\/admin\/login\?error=invalid/.test(page.url())) fail("a wrong password went to " + page.url());
    const alert = await page.textContent("main [role=alert]");
    if (!alert.includes("Error:")) fail("the login error: " + alert);
  }
  await page.evaluate(() => document.activeElement && document.activeElement.blur());
  await page.keyboard.press("Tab");
  let f = await focused(page);
  if (!/skip-link/.test(f.cls)) fail("login: the first Tab stop is " + describe(f));
  await page.keyboard.press("Enter");
  await page.keyboard.press("Tab");
  f = await focused(page);
  if (f.id !== "username") fail("login: after the skip link, Tab is at " + describe(f) + ", not the username");
  await page.keyboard.type(user);
  await page.keyboard.press("Tab");
  if ((await focused(page)).id !== "password") fail("login: Tab from the username is not the password");
  await page.keyboard.type(pass);
  await go(page, "the dashboard, after login", 200, () => page.keyboard.press("Enter"));
  if (page.url() !== admin + "/") fail("login did not land on the dashboard: " + page.url());
  const who = await page.textContent(".account");
  if (!who.includes("Logged in as " + user)) fail("the header says " + JSON.stringify(who.trim()));
};

const browser = await launch();
try {
  // ---- As `admin`, a superuser.
  const context = await browser.newContext();
  const page = await watched(context);
  await logIn(page, "admin", password, "not the password");

  // The dashboard: the notes, their count, an Add link.
  const notesRow = page.locator("main table").first().locator("tbody tr", { hasText: "Notes" });
  if ((await notesRow.count()) !== 1) fail("the dashboard does not list the notes");
  const before = Number(await notesRow.locator("td.number").textContent());
  if (!Number.isInteger(before)) fail("the dashboard's count of notes: " + before);

  // Add, with an empty text: 422, the error summary has the focus, its
  // link moves the focus to the field.
  await go(page, "the add form", 200, () => notesRow.getByRole("link", { name: /^Add/ }).click());
  if (page.url() !== admin + "/notes/add") fail("the Add link went to " + page.url());
  await page.fill("#field-text", "");
  await go(page, "the add form with an error", 422, () => page.click("main .actions button:text-is('Save')"));
  const summary = page.locator(".error-summary");
  if ((await summary.count()) !== 1) fail("no error summary on the 422 page");
  const heading = (await summary.locator("h2").textContent()).trim();
  if (!/problem/.test(heading)) fail("the error summary's heading: " + heading);
  let f = await focused(page);
  if (f.id !== "error-summary") fail("after the 422 the focus is on " + describe(f) + ", not the error summary");
  if ((await page.getAttribute("#field-text", "aria-invalid")) !== "true") fail("the field is not aria-invalid");
  const describedBy = await page.getAttribute("#field-text", "aria-describedby");
  const fieldError = await page.textContent("#" + describedBy);
  if (!fieldError.startsWith("Error:")) fail("the field's error: " + fieldError);
  await page.screenshot({ path: shots + "/admin-form-errors.png", fullPage: true });
  // With the keyboard: Tab from the summary is its first link; Enter
  // follows it to the field.
  await page.keyboard.press("Tab");
  f = await focused(page);
  if (f.href !== "#field-text") fail("Tab from the error summary is at " + describe(f));
  await page.keyboard.press("Enter");
  f = await focused(page);
  if (f.id !== "field-text") fail("the summary's link moved the focus to " + describe(f));

  // Fixed and saved: the note's page, with the notice.
  const first = `${run} bravo`;
  await page.keyboard.type(first);
  // The text is a textarea (Enter is a new line): Tab to Save, Enter.
  await page.keyboard.press("Tab");
  f = await focused(page);
  if (f.tag !== "button" || !f.text.startsWith("Save")) fail("Tab from the text is at " + describe(f));
  await go(page, "a note's page after saving", 200, () => page.keyboard.press("Enter"));
  const saved = page.url().match(/\/admin\/notes\/(\d+)\?saved=1$/);
  if (!saved) fail("saving went to " + page.url());
  const id = saved[1];
  if (!(await page.textContent(".notice")).includes("Saved")) fail("no notice after saving");
  if ((await page.inputValue("#field-text")) !== first) fail("the saved text is " + (await page.inputValue("#field-text")));
  const author = await page.locator("dl.read-only", { hasText: "Author" }).locator("dd").textContent();
  if (author !== "admin") fail("the note's author: " + author);

  // Edited.
  const edited = `${run} alpha (edited)`;
  await page.fill("#field-text", edited);
  await go(page, "a note's page after editing", 200, () => page.click("main .actions button:text-is('Save')"));
  if (page.url() !== `${admin}/notes/${id}?saved=1`) fail("editing went to " + page.url());
  if ((await noteText(page, id)) !== edited) fail("the edit was not saved");

  // The delete page says what goes, and Cancel keeps the note.
  await go(page, "a note's delete confirmation", 200, () => page.click("main a.danger:text-is('Delete')"));
  if (!(await page.textContent("main")).includes("cannot be undone")) fail("the delete page does not warn");
  await go(page, "a note's page after Cancel", 200, () => page.click("main a:text-is('Cancel')"));
  if ((await noteText(page, id)) !== edited) fail("Cancel changed the note");

  // Two more, with "Save and add another".
  await open(page, "the add form", "/notes/add");
  await page.fill("#field-text", `${run} charlie`);
  await go(page, "the add form after Save and add another", 200, () => page.click("main button[name=_next][value=add]"));
  if (!page.url().startsWith(admin + "/notes/add")) fail("Save and add another went to " + page.url());
  await page.fill("#field-text", `${run} delta`);
  await go(page, "a note's page after saving", 200, () => page.click("main .actions button:text-is('Save')"));

  // The list, from the breadcrumbs; the keyboard reaches its controls
  // (the skip link first).
  await go(page, "the list of notes", 200, () => page.click("nav.breadcrumbs a[href='/admin/notes/']"));
  if (new URL(page.url()).pathname !== "/admin/notes/") fail("not on the list: " + page.url());
  await tabThrough(page, "the list", ["#search", "main a.button[href$='/notes/add']", "#bulk-action",
    "main .bulk button", "main table input[type=checkbox]", "main thead a", "main tbody a", "form.logout button"]);

  // Search: this run's notes only.
  await page.fill("#search", run);
  await go(page, "the list, searched", 200, () => page.click("form[role=search] button[type=submit]"));
  if (new URL(page.url()).searchParams.get("q") !== run) fail("the search's URL: " + page.url());
  let texts = await listed(page);
  const ours = [edited, `${run} charlie`, `${run} delta`];
  if (texts.length !== 3 || !ours.every((t) => texts.includes(t))) fail("the search found " + JSON.stringify(texts));

  // Sort by text: ascending, then descending, with aria-sort.
  const textHeader = page.locator("main thead th", { hasText: "Text" });
  await go(page, "the list, sorted", 200, () => textHeader.locator("a").click());
  if ((await textHeader.getAttribute("aria-sort")) !== "ascending") fail("aria-sort after one click: " + (await textHeader.getAttribute("aria-sort")));
  if ((await page.$$("main thead th[aria-sort]")).length !== 1) fail("more than one column has aria-sort");
  if (new URL(page.url()).searchParams.get("q") !== run) fail("sorting lost the search: " + page.url());
  texts = await listed(page);
  if (JSON.stringify(texts) !== JSON.stringify([...ours].sort())) fail("ascending: " + JSON.stringify(texts));
  await go(page, "the list, sorted descending", 200, () => textHeader.locator("a").click());
  if ((await textHeader.getAttribute("aria-sort")) !== "descending") fail("aria-sort after two clicks: " + (await textHeader.getAttribute("aria-sort")));
  texts = await listed(page);
  if (JSON.stringify(texts) !== JSON.stringify([...ours].sort().reverse())) fail("descending: " + JSON.stringify(texts));

  // A filter, when the notes have one (a boolean, a choice, a date or a
  // foreign key): its first value that is not "any".
  const filters = await page.$$eval("form[role=search] select", (ss) =>
    ss.map((s) => ({ id: s.id, name: s.name, values: [...s.options].map((o) => o.value).filter((v) => v !== "") })));
  for (const filter of filters) {
    if (filter.values.length === 0) continue;
    await page.selectOption("#" + filter.id, filter.values[0]);
    await go(page, "the list, filtered by " + filter.name, 200, () => page.click("form[role=search] button[type=submit]"));
    if (new URL(page.url()).searchParams.get(filter.name) !== filter.values[0]) fail("the filter's URL: " + page.url());
    await page.selectOption("#" + filter.id, "");
    await go(page, "the list, unfiltered", 200, () => page.click("form[role=search] button[type=submit]"));
  }
  if (filters.length === 0) console.log("note the notes' list has no filter (no boolean, choice, date or foreign key column): the users' list is filtered below");
  await page.screenshot({ path: shots + "/admin-list.png", fullPage: true });

  // Bulk delete of two of them, through the confirmation page.
  const doomed = [`${run} charlie`, `${run} delta`];
  for (const t of doomed) await page.locator("main tbody tr", { hasText: t }).locator("input[type=checkbox]").check();
  await page.selectOption("#bulk-action", "delete");
  await go(page, "the bulk delete's confirmation", 200, () => page.click("main .bulk button[type=submit]"));
  const asked = await page.$$eval("main ul li", (lis) => lis.map((l) => l.textContent.trim()));
  if (asked.length < 2) fail("the confirmation lists " + JSON.stringify(asked));
  if ((await page.$$("main form input[name=_selected]")).length !== 2) fail("the confirmation does not carry the two keys");
  // Cancel is a way out that deletes nothing.
  if ((await page.$$("main a:text-is('Cancel')")).length !== 1) fail("no Cancel on the confirmation");
  await go(page, "the list after the bulk delete", 200, () => page.click("main button.danger"));
  if (!(await page.textContent(".notice")).includes("Deleted 2")) fail("the notice after the bulk delete: " + (await page.textContent(".notice")));
  await page.fill("#search", run);
  await go(page, "the list, searched", 200, () => page.click("form[role=search] button[type=submit]"));
  texts = await listed(page);
  if (JSON.stringify(texts) !== JSON.stringify([edited])) fail("after the bulk delete the search finds " + JSON.stringify(texts));
  await open(page, "the dashboard", "/");
  const after = Number(await page.locator("main table").first().locator("tbody tr", { hasText: "Notes" }).locator("td.number").textContent());
  if (after !== before + 1) fail(`the dashboard counts ${after} notes, not ${before} + 1 (three added, two deleted)`);

  // The log: the add and the change of the first note, the adds and the
  // deletes of the two others, by admin; filtered by model; one entry's
  // values before and after.
  await go(page, "the log", 200, () => page.click("main a:text-is('The full log')"));
  const models = await page.$$eval("#log-model option", (os) => os.map((o) => o.value));
  if (!models.includes("notes")) fail("the log's filter has no notes: " + JSON.stringify(models));
  if (new Set(models).size !== models.length) fail("the log's filter repeats an option: " + JSON.stringify(models));
  await page.selectOption("#log-model", "notes");
  await go(page, "the log, filtered", 200, () => page.click("main form.toolbar button[type=submit]"));
  if (new URL(page.url()).searchParams.get("model") !== "notes") fail("the log's filter URL: " + page.url());
  const rows = await logRows(page);
  if (rows.some((r) => r[2] !== "Notes")) fail("the filtered log shows other models: " + JSON.stringify(rows));
  const recent = rows.slice(0, 6);
  const count = (change) => recent.filter((r) => r[1] === "admin" && r[4] === change).length;
  if (count("add") !== 3 || count("change") !== 1 || count("delete") !== 2) fail("the log's latest entries: " + JSON.stringify(recent));
  const change = page.locator("main tbody tr", { has: page.locator("a:text-is('change')") }).first();
  if (!(await change.locator(`a[href$='/notes/${id}']`).count())) fail("the latest change is not of note " + id + ": " + (await change.textContent()));
  await go(page, "a log entry", 200, () => change.locator("a:text-is('change')").click());
  const diff = await page.$$eval("main table.changes tbody tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
  const textRow = diff.find((r) => r[0].toLowerCase() === "text");
  if (!textRow || !textRow[1].includes(first) || !textRow[2].includes(edited)) fail("the entry's changes: " + JSON.stringify(diff));
  if (await page.$("main form[method=post]")) fail("a log entry has a form");
  await open(page, "the note's history", `/log/?model=notes&object=${id}`);
  const history = (await logRows(page)).map((r) => r[4]);
  if (JSON.stringify(history) !== JSON.stringify(["change", "add"])) fail("the note's history: " + JSON.stringify(history));

  // CSRF: every admin form posted without its token is 403, and nothing
  // changed.
  await open(page, "a note's page", `/notes/${id}`);
  const token = await csrfOf(page);
  const forms = [
    ["/notes/add", { text: `${run} no token` }],
    [`/notes/${id}`, { text: `${run} no token` }],
    [`/notes/${id}/delete`, { confirm: "yes" }],
    ["/notes/", { action: "delete", confirm: "yes", _selected: id }],
  ];
  for (const [path, form] of forms) {
    const res = await page.request.post(admin + path, { form, maxRedirects: 0 });
    if (res.status() !== 403) fail(`POST /admin${path} without csrf_token answered ${res.status()}`);
    const wrong = await page.request.post(admin + path, { form: { ...form, csrf_token: token.slice(1) + "x" }, maxRedirects: 0 });
    if (wrong.status() !== 403) fail(`POST /admin${path} with a wrong csrf_token answered ${wrong.status()}`);
  }
  if ((await noteText(page, id)) !== edited) fail("a POST without a token changed the note");
  const search = await page.request.get(`${admin}/notes/?q=${encodeURIComponent(run + " no token")}`);
  if (!/<p>0 rows<\/p>/.test(await search.text())) fail("a POST without a token added a note");

  // A row that is not there: the admin's 404 page. A column that cannot
  // be sorted: a 400 page saying so. A page past the end: empty, with a
  // link to the last.
  await open(page, "a missing note", "/notes/999999999", 404);
  await open(page, "the list with a bad parameter", "/notes/?order=nope", 400);
  if (!(await page.textContent("main")).includes("`order`")) fail("the 400 page does not name the parameter");
  await open(page, "the list past its last page", "/notes/?page=999999");
  if ((await listed(page)).length !== 0) fail("a page past the end lists rows");
  await go(page, "the list's last page", 200, () => page.click("main a:text-is('Go to the last page')"));

  // ---- A staff user who may only view the notes.
  await viewOnly(page, id, edited);

  // Logout: the login page; the admin is closed again.
  await go(page, "the login page after logout", 200, () => page.click("form.logout button[type=submit]"));
  if (!page.url().startsWith(admin + "/login")) fail("logout went to " + page.url());
  if (await page.$("form.logout")) fail("a logout form after logout");
  const closed = await page.request.get(admin + "/", { maxRedirects: 0 });
  if (closed.status() !== 303 || !closed.headers()["location"].startsWith("/admin/login")) fail("/admin/ after logout answered " + closed.status());
  await context.close();

  if (problems.length) fail(problems.join("\n"));
  console.log(`ok   /admin/: keyboard login, a 422 with its summary focused, add, edit, search, sort, bulk delete, the log, CSRF refused, logout; axe-core on ${checked.length} pages, no serious or critical violation; no CSP violation`);
} finally {
  await browser.close();
}

// The view-only part: as `admin` (on `page`), a staff user `viewer...`
// made on the users page and given `view` on the notes on the
// permissions page; then, logged in as that user, the note `id` (its text
// `text`) is there to read and nothing else.
async function viewOnly(page, id, text) {
  const viewer = "viewer-" + run;
  const secret = "a viewer's password " + run;
  await open(page, "the add user form", "/tern_users/add");
  await page.fill("main [name=username]", viewer);
  await page.fill("main [name=email]", viewer + "@example.com");
  await page.fill("main [name=password]", secret);
  await page.fill("main [name=password2]", secret);
  await page.check("main [name=is_staff]");
  await page.uncheck("main [name=is_superuser]");
  // Active by default: a checkbox only when the form offers it.
  if (await page.$("main [name=is_active]")) await page.check("main [name=is_active]");
  await go(page, "a user's page after saving", 200, () => page.click("main .actions button:text-is('Save')"));
  if (!/\/admin\/tern_users\/\d+\?saved=1$/.test(page.url())) fail("saving the user went to " + page.url());
  // The users' list filters by a boolean: not superusers shows the
  // viewer and not `admin`.
  await open(page, "the users", "/tern_users/");
  await page.selectOption("#filter-is_superuser", "false");
  await go(page, "the users, filtered", 200, () => page.click("form[role=search] button[type=submit]"));
  if (new URL(page.url()).searchParams.get("is_superuser") !== "false") fail("the filter's URL: " + page.url());
  const names = await page.$$eval("main tbody tr", (rs) => rs.map((r) => r.textContent));
  if (!names.some((n) => n.includes(viewer)) || names.some((n) => /\badmin\b/.test(n) && !n.includes(viewer)))
    fail("the users who are not superusers: " + JSON.stringify(names));
  await open(page, "the add permission form", "/tern_admin_permissions/add");
  // The user's option: labelled with the name (and its id after it).
  const option = await page.$$eval("main select[name=user_id] option", (os, v) => {
    const o = os.find((o) => o.textContent.trim() === v || o.textContent.trim().startsWith(v + " ("));
    return o ? o.value : null;
  }, viewer);
  if (!option) fail("the permission form offers no " + viewer);
  await page.selectOption("main select[name=user_id]", option);
  await page.selectOption("main select[name=model]", "notes");
  await page.selectOption("main select[name=action]", "view");
  await go(page, "a permission's page after saving", 200, () => page.click("main .actions button:text-is('Save')"));
  if (!/\/admin\/tern_admin_permissions\/\d+\?saved=1$/.test(page.url())) fail("saving the permission went to " + page.url());

  const context = await browser.newContext();
  const as = await watched(context);
  await logIn(as, viewer, secret);
  const links = await as.$$eval("main a", (as) => as.map((a) => a.getAttribute("href")));
  if (links.some((h) => /\/add$/.test(h))) fail("the viewer's dashboard has an Add link");
  const shown = await as.$$eval("main table:first-of-type tbody th", (ths) => ths.map((t) => t.textContent.trim()));
  if (JSON.stringify(shown) !== JSON.stringify(["Notes"])) fail("the viewer's dashboard lists " + JSON.stringify(shown));
  await open(as, "the users, refused to the viewer", "/tern_users/", 403);
  await open(as, "the log, as the viewer", "/log/");
  const seen = (await logRows(as)).map((r) => r[2]);
  if (seen.length === 0 || seen.some((m) => m !== "Notes")) fail("the viewer's log shows " + JSON.stringify([...new Set(seen)]));
  await open(as, "the notes, as the viewer", "/notes/");
  if ((await as.$$("main input[type=checkbox]")).length !== 0) fail("the viewer's list has checkboxes");
  if ((await as.$$("main a[href$='/notes/add']")).length !== 0) fail("the viewer's list has an Add link");
  if ((await as.$$("main form[method=post]")).length !== 0) fail("the viewer's list has a POST form");
  await open(as, "a note, as the viewer", `/notes/${id}`);
  if ((await as.$$("main form[method=post]")).length !== 0) fail("the viewer's note page has a POST form");
  if (!(await as.textContent("main")).includes(text)) fail("the viewer does not see the note's text");
  if ((await as.$$("main a[href$='/delete']")).length !== 0) fail("the viewer's note page has a Delete link");
  // A forged edit, with the viewer's own valid token: 403, unchanged.
  const token = await csrfOf(as);
  const forged = await as.request.post(`${admin}/notes/${id}`, { form: { csrf_token: token, text: "forged by the viewer" }, maxRedirects: 0 });
  if (forged.status() !== 403) fail("the viewer's forged edit answered " + forged.status());
  const forgedDelete = await as.request.post(`${admin}/notes/${id}/delete`, { form: { csrf_token: token, confirm: "yes" }, maxRedirects: 0 });
  if (forgedDelete.status() !== 403) fail("the viewer's forged delete answered " + forgedDelete.status());
  if ((await noteText(page, id)) !== text) fail("the viewer's forged POST changed the note");
  await open(as, "the add form, refused to the viewer", "/notes/add", 403);
  await context.close();
  console.log(`ok   a view-only staff user (${viewer}): no checkbox, Add link or edit form; forged edit and delete 403, the note unchanged`);
}
