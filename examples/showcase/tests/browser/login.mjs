// The showcase's login and notes pages in a real browser: a wrong
// password shows the problem's detail, the right one lands on /notes, a
// note is added through the form (its CSRF token included), hostile
// text is shown as text, and logging out takes the form away.
//
//   node login.mjs http://127.0.0.1:PORT [password]
import { chromium } from "playwright-core";

const base = process.argv[2];
const password = process.argv[3] || "tern-showcase";
const fail = (message) => {
  console.error("FAIL: " + message);
  process.exit(1);
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push("page: " + e.message));
  page.on("dialog", (d) => { problems.push("a dialog opened: " + d.message()); d.dismiss(); });

  await page.goto(base + "/login");
  await page.fill("input[name=username]", "admin");
  await page.fill("input[name=password]", "not the password");
  await page.click("button[type=submit]");
  await page.waitForFunction(() => document.getElementById("error").textContent.length > 0);
  const error = await page.textContent("#error");
  if (!error.includes("wrong username or password")) fail("the error shown: " + error);

  await page.fill("input[name=password]", password);
  await Promise.all([page.waitForURL(base + "/notes"), page.click("button[type=submit]")]);
  if (!(await page.textContent("body")).includes("Logged in as admin")) fail("not logged in on /notes");

  const text = "<img src=x onerror=alert(1)> note " + Date.now();
  await page.fill("input[name=text]", text);
  await Promise.all([page.waitForURL(base + "/notes"), page.click("form[method=post] button[type=submit]")]);
  const first = await page.textContent("#notes li");
  if (!first.startsWith(text)) fail("the first note is " + JSON.stringify(first));
  if ((await page.$$("#notes img")).length !== 0) fail("the note's markup was rendered");

  await page.click("#logout");
  await page.waitForSelector("a[href='/login']", { timeout: 10000 });
  if ((await page.$$("form[method=post]")).length !== 0) fail("the form is still there after logout");
  if (!(await page.textContent("body")).includes("to add a note")) fail("no login link after logout");

  if (problems.length) fail(problems.join("\n"));
  console.log("ok   /login and /notes: wrong password shown, login, a note added as text, logout");
} finally {
  await browser.close();
}
