"""`preview-qa explore` (issue #68): what this PR broke on pages no test covers. Pages (given, the sitemap, links) ->
sweeps on the preview and the baseline -> findings compared by what they are (verdict/findings.py) -> each new one's
repro, an ordinary test, run on both sides: confirmed only when it fails on the preview and passes on the baseline."""
