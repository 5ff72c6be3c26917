"""What is read from the live page: the page checks (url, title, text) and the visible text nearest a failing one."""
