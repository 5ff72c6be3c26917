"""`preview-qa plan` (issue #39): changed files -> routes no test covers -> drafts from what each page shows, each
tried once through the run's own engine before anyone reads it -> manifest YAML."""
