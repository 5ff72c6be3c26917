"""A test's data through the preview's API: its before: and after: requests, and the values they save for <var>."""
