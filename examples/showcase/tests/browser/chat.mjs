// The showcase's chat in a real browser: two guests in two browser
// contexts join, see each other in the presence list, exchange messages
// (hostile text shown as text); one closes its page and the other sees
// it leave.
//
//   node chat.mjs http://127.0.0.1:PORT
import { fail, launch } from "./lib.mjs";

const base = process.argv[2];

const browser = await launch();
const problems = [];
async function guest(name) {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on("pageerror", (e) => problems.push(name + " page: " + e.message));
  page.on("dialog", (d) => { problems.push(name + ": a dialog opened: " + d.message()); d.dismiss(); });
  await page.goto(base + "/chat");
  await page.waitForSelector("#join:not([hidden])");
  await page.fill("#join input[name=name]", name);
  await page.click("#join button[type=submit]");
  await page.waitForSelector("#room:not([hidden])", { timeout: 10000 });
  return { context, page };
}
const people = (page) => page.$$eval("#people li", (lis) => lis.map((li) => li.textContent));
const waitFor = async (page, what, check) => {
  try {
    await page.waitForFunction(check, null, { timeout: 10000 });
  } catch {
    fail(what + "; the page shows: " + (await page.textContent("body")));
  }
};

try {
  const ada = await guest("ada");
  const bob = await guest("bob");
  await waitFor(ada.page, "ada does not see bob", () =>
    [...document.querySelectorAll("#people li")].some((li) => li.textContent === "bob (guest)"));
  const bobSees = await people(bob.page);
  if (!bobSees.includes("ada (guest)") || !bobSees.includes("bob (guest)")) fail("bob sees " + bobSees);

  await ada.page.fill("#say input[name=text]", "hello bob");
  await ada.page.click("#say button[type=submit]");
  await waitFor(bob.page, "bob did not get ada's message", () =>
    document.querySelector("#log").textContent.includes("ada (guest): hello bob"));
  const hostile = "<img src=x onerror=alert(1)>";
  await bob.page.fill("#say input[name=text]", hostile);
  await bob.page.click("#say button[type=submit]");
  await waitFor(ada.page, "ada did not get bob's message", () =>
    document.querySelector("#log").textContent.includes("bob (guest): <img"));
  if ((await ada.page.$$("#log img")).length !== 0) fail("the message's markup was rendered");

  await bob.context.close();
  await waitFor(ada.page, "ada did not see bob leave", () =>
    document.querySelector("#log").textContent.includes("bob (guest) left") &&
    ![...document.querySelectorAll("#people li")].some((li) => li.textContent === "bob (guest)"));
  const left = await people(ada.page);
  if (left.length !== 1 || left[0] !== "ada (guest)") fail("ada sees " + left);

  if (problems.length) fail(problems.join("\n"));
  console.log("ok   /chat: two guests see each other, exchange messages (markup as text), one leaves");
} finally {
  await browser.close();
}
