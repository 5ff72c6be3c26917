"""preview-qa: AI browser tests for every pull request's preview deployment, with verdicts you can trust."""
