// Tern's website in a real browser: the home page renders, every page
// the site links to answers 200 (a crawl from the home page), axe-core
// finds no serious or critical accessibility violation on any of them,
// and a screenshot of the home page is kept.
//
//   node site.mjs http://127.0.0.1:PORT [screenshot.png]
import { createRequire } from "node:module";
import { fail, launch } from "./lib.mjs";

const require = createRequire(import.meta.url);
const axePath = require.resolve("axe-core");
const base = process.argv[2];
const screenshot = process.argv[3];

// Pages a crawl does not open: sockets and event streams, and a form's
// target that only takes POST.
const skip = (path) =>
  path.startsWith("/chat/socket") || path.startsWith("/chat/events") || path.startsWith("/auth/");

const browser = await launch();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push("page: " + e.message));
  const origin = new URL(base).origin;

  const home = await page.goto(base + "/");
  if (home.status() !== 200) fail("/ answered " + home.status());
  if ((await page.textContent("h1")) !== "Tern") fail("the home page's title");
  const features = await page.$$eval(".feature", (f) => f.length);
  if (features < 10) fail("the home page lists " + features + " features");
  const sheet = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
  if (!sheet.includes("system-ui")) fail("the stylesheet did not apply: " + sheet);
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  const seen = new Set(["/"]);
  const queue = ["/"];
  const visited = [];
  while (queue.length > 0 && visited.length < 80) {
    const path = queue.shift();
    const res = await page.goto(base + path);
    if (res.status() !== 200) fail(path + " answered " + res.status());
    visited.push(path);
    const type = res.headers()["content-type"] || "";
    if (!type.startsWith("text/html")) continue;
    await page.addScriptTag({ path: axePath });
    const result = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
    const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    if (bad.length > 0) {
      fail(path + ": " + bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`).join("; "));
    }
    const links = await page.$$eval("a[href]", (as) => as.map((a) => a.href));
    for (const link of links) {
      const url = new URL(link);
      if (url.origin !== origin) continue;
      const next = url.pathname + url.search;
      if (skip(url.pathname) || seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  for (const must of ["/guide", "/guide/performance", "/chat", "/notes", "/docs", "/llms.txt"]) {
    if (!visited.includes(must)) fail("the crawl never reached " + must + ": " + JSON.stringify(visited));
  }
  if (errors.length > 0) fail(errors.join("; "));
  console.log(`site: ${visited.length} pages answered 200, no serious or critical axe violation`);
} finally {
  await browser.close();
}
