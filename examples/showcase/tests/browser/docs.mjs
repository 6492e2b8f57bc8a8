// The showcase's API docs page in a real browser: it renders every
// operation of /openapi.json, opens one, shows its schema with the
// contract's rules, logs no error, and fetches nothing from another
// origin (the page works offline).
//
//   node docs.mjs http://127.0.0.1:PORT [screenshot.png]
import { fail, launch } from "./lib.mjs";

const base = process.argv[2];
const screenshot = process.argv[3];

const browser = await launch();
try {
  const page = await browser.newPage();
  const problems = [];
  const origin = new URL(base).origin;
  page.on("console", (m) => m.type() === "error" && problems.push("console: " + m.text()));
  page.on("pageerror", (e) => problems.push("page: " + e.message));
  page.on("request", (r) => {
    if (new URL(r.url()).origin !== origin) problems.push("fetched from elsewhere: " + r.url());
  });
  const res = await page.goto(base + "/docs");
  if (res.status() !== 200) fail("/docs answered " + res.status());
  await page.waitForSelector("details.op", { timeout: 10000 });
  const title = await page.textContent("h1");
  if (title !== "Tern showcase") fail("title: " + title);
  const ops = await page.$$eval("details.op > summary", (s) => s.map((x) => x.textContent));
  for (const expected of ["post/items", "get/items", "get/items/{id}", "get/health"]) {
    if (!ops.includes(expected)) fail("no operation " + expected + " in " + JSON.stringify(ops));
  }
  // Open POST /items: its body's schema carries the contract's rules.
  const post = page.locator("details.op", { hasText: "post/items" }).first();
  await post.locator("summary").click();
  const text = await post.innerText();
  for (const expected of ["Request body", "application/json", "application/cbor", '"minLength": 1', '"maxLength": 80', '"format": "email"', "422"]) {
    if (!text.includes(expected)) fail("POST /items does not show " + expected + ":\n" + text);
  }
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  if (problems.length) fail(problems.join("\n"));
  console.log("ok   /docs: " + ops.length + " operations rendered, POST /items shows its rules, nothing fetched elsewhere");
} finally {
  await browser.close();
}
