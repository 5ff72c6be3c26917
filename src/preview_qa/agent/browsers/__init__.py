"""Browsers, by Playwright alone: launching and ending Chromium, the pool and its leases (a fresh context per test),
saved logins, and the scope a DevTools connection is kept to."""
