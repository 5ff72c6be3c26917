"""Which tests a run runs, and why the others not: tags, --only, the files a change touched, shards."""
