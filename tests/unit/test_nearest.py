"""The nearest visible line for a failing text check: pure matching, without a browser."""

from __future__ import annotations

from preview_qa.agent.page.nearest import LINE_LIMIT, describe_nearest, nearest_line, visible_lines

HEADER = [
    "Acme",
    "Home",
    "Shop",
    "Deals",
    "Cart",
    "Account",
    "Sign in",
    "Help",
    "Search products",
    "Free shipping on orders over $50",
]
BODY = [f"Item {n}: Widget model {n} — ${n}.99" for n in range(1, 41)]


def test_the_line_nearest_the_expected_text_wins_over_the_header_and_navigation() -> None:
    lines = [*HEADER, *BODY, "Cart total: 1 item(s)", "Checkout"]
    nearest = nearest_line("Cart total: 2 item(s)", lines)
    assert nearest is not None and nearest.line == "Cart total: 1 item(s)"
    assert nearest.before == "Item 40: Widget model 40 — $40.99" and nearest.after == "Checkout"
    text = describe_nearest(nearest, lines)
    assert text.startswith("'Cart total: 1 item(s)' (the closest visible line, after 'Item 40")
    assert "before 'Checkout'" in text


def test_case_and_whitespace_do_not_matter() -> None:
    nearest = nearest_line("order   CONFIRMED", ["Menu", "Your order is being confirmed", "Footer"])
    assert nearest is not None and nearest.line == "Your order is being confirmed"


def test_a_short_line_that_is_part_of_the_text_does_not_win_over_a_near_copy() -> None:
    nearest = nearest_line("Cart total: 2 item(s)", ["Cart", "total", "Cart total: 3 item(s)"])
    assert nearest is not None and nearest.line == "Cart total: 3 item(s)"


def test_a_long_line_is_cut_around_its_best_match() -> None:
    filler = "lorem ipsum dolor sit amet " * 20
    line = f"{filler}Group with this Name already exists. {filler}"
    nearest = nearest_line("Group with this name exists", [line])
    assert nearest is not None
    assert "Group with this Name already exists" in nearest.line
    assert nearest.line.startswith("…") and nearest.line.endswith("…") and len(nearest.line) <= LINE_LIMIT + 2


def test_nothing_alike_is_said_so_instead_of_naming_noise() -> None:
    lines = ["Home", "About", "Contact"]
    assert nearest_line("Payment confirmed", lines) is None
    assert describe_nearest(None, lines) == (
        "no visible line resembles it (the page shows 3 line(s) of text: 'Home', 'About', 'Contact')"
    )
    assert describe_nearest(None, []) == "the page shows no visible text"


def test_with_nothing_alike_the_pages_first_ten_lines_are_listed_each_clipped() -> None:
    lines = [*HEADER[:9], "x" * 200, *BODY]
    text = describe_nearest(nearest_line("Payment confirmed", lines), lines)
    assert text.startswith("no visible line resembles it (the page shows 50 line(s) of text, the first 10: 'Acme', 'Home',")
    assert text.endswith(f"'Search products', '{'x' * 59}…')") and "Item 1" not in text


def test_visible_lines_drop_blank_lines_and_fold_whitespace() -> None:
    assert visible_lines("  Acme \n\n\tHome\t| Shop \n \nCart total:   1\n") == ["Acme", "Home | Shop", "Cart total: 1"]
