"""What a test's context may do, and what it may show: the network firewall, where typed text goes, the action guard,
the screenshot masking."""
