// The showcase's login and notes pages, and the chat, in a real browser,
// as a user without any script of the page's own would use them: a wrong
// password shows the error, the right one lands on /notes, a note is
// added through the form (its CSRF token included), hostile text is shown
// as text, logging out takes the form away, the chat works logged in.
// Run against development and against production settings (the
// production CSP, `default-src 'self'`, allows no inline script or
// style): no CSP violation is reported, and no request ever carries the
// password in its URL.
//
//   node login.mjs http://127.0.0.1:PORT [password]
import { fail, launch } from "./lib.mjs";

const base = process.argv[2];
const password = process.argv[3] || "tern-showcase";

const browser = await launch();
try {
  const page = await browser.newPage();
  const problems = [];
  const urls = [];
  page.on("pageerror", (e) => problems.push("page: " + e.message));
  page.on("dialog", (d) => { problems.push("a dialog opened: " + d.message()); d.dismiss(); });
  page.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push("console: " + m.text());
  });
  page.on("request", (r) => urls.push(r.url()));
  // A CSP violation fires an event in the page whether or not the
  // console shows it.
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error("Content Security Policy: refused " + e.violatedDirective + " " + e.blockedURI));
  });

  await page.goto(base + "/login");
  // The stylesheet applied (a file: an inline <style> would be refused).
  const width = await page.$eval("body", (b) => getComputedStyle(b).maxWidth);
  if (width === "none") fail("the login page has no style");
  await page.fill("input[name=username]", "admin");
  await page.fill("input[name=password]", "not the password");
  await Promise.all([page.waitForURL(/\/login\?error=invalid/), page.click("#login button[type=submit]")]);
  const error = await page.textContent("#error");
  if (!error.includes("wrong username or password")) fail("the error shown: " + error);

  await page.fill("input[name=username]", "admin");
  await page.fill("input[name=password]", password);
  await Promise.all([page.waitForURL(base + "/notes"), page.click("#login button[type=submit]")]);
  if (!(await page.textContent("body")).includes("Logged in as admin")) fail("not logged in on /notes");

  const text = "<img src=x onerror=alert(1)> note " + Date.now();
  await page.fill("#add input[name=text]", text);
  await Promise.all([page.waitForURL(base + "/notes"), page.click("#add button[type=submit]")]);
  const first = await page.textContent("#notes li");
  if (!first.startsWith(text)) fail("the first note is " + JSON.stringify(first));
  if ((await page.$$("#notes img")).length !== 0) fail("the note's markup was rendered");

  // The chat, as the logged-in user (its script is a file of the site).
  await page.goto(base + "/chat");
  await page.waitForSelector("#room:not([hidden])", { timeout: 10000 });
  await page.waitForFunction(() =>
    [...document.querySelectorAll("#people li")].some((li) => li.textContent.startsWith("admin")),
    null, { timeout: 10000 });
  const said = "hello from admin " + Date.now();
  await page.fill("#say input[name=text]", said);
  await page.click("#say button[type=submit]");
  await page.waitForFunction((s) => document.querySelector("#log").textContent.includes(s), said, { timeout: 10000 });

  await page.goto(base + "/notes");
  await Promise.all([page.waitForURL(base + "/notes"), page.click("#logout button[type=submit]")]);
  await page.waitForSelector("a[href='/login']", { timeout: 10000 });
  if ((await page.$$("form[method=post]")).length !== 0) fail("a form is still there after logout");
  if (!(await page.textContent("body")).includes("to add a note")) fail("no login link after logout");
  const session = await page.evaluate(() => fetch("/auth/session").then((r) => r.status));
  if (session !== 401) fail("the session answers " + session + " after logout");

  const leaked = urls.filter((u) => u.includes(encodeURIComponent(password)) || u.includes(password) ||
    u.includes("not%20the%20password") || u.includes("not+the+password") || /[?&]password=/.test(u));
  if (leaked.length) fail("a password in a URL: " + leaked.join(", "));
  if (problems.length) fail(problems.join("\n"));
  console.log("ok   /login, /notes and /chat: wrong password shown, login, a note added as text, the chat, logout; no CSP violation, no password in a URL");
} finally {
  await browser.close();
}
