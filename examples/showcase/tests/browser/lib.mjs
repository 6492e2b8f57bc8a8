// What the browser tests share: the browser they drive (Debian's
// chromium, or $CHROMIUM, headless) and how a check fails.
import { chromium } from "playwright-core";

// Says what failed and ends the run with exit status 1.
export const fail = (message) => {
  console.error("FAIL: " + message);
  process.exit(1);
};

// Chromium, headless, without its own background traffic (a test that
// counts requests sees only the page's).
export const launch = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking"],
  });
