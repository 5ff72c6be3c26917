"""Mail catchers by their REST APIs (MailDev, Mailpit): an address per test, a wait for its mail, the mail as a page."""
