"""Inside a GitHub Actions run: workflow commands, the job summary's Markdown, the reporter and the pull-request comment."""
