"""The demo shop as a fixture app that mails by real SMTP (to MailDev, in the e2e tests): a sign-up mails "Verify your
email" with a one-use link to /verify ("Email verified" once, then "This link is not valid"). Its mail also carries a
one-time code (CODE: a secret once read, masked in the step's picture), a script (that would retitle the page) and a
tracking pixel (`pixels` counts its requests): an opened mail runs neither."""

from __future__ import annotations

from typing import cast

from preview_qa.demo.shop import DemoShop, ShopHandler

SUBJECT = "Verify your email"
CODE = "739204"


class _Handler(ShopHandler):
    def get(self, path: str) -> bool:
        if path != "/pixel.gif":
            return super().get(path)
        shop = cast("SignupShop", self.site)
        with shop._lock:
            shop.pixels += 1
        self._send(204)
        return True


class SignupShop(DemoShop):
    """DemoShop mailing through 127.0.0.1:`mail_port`."""

    handler = _Handler

    def __init__(self, mail_port: int):
        super().__init__(mail_port=mail_port)
        self.pixels = 0  # requests of the mail's tracking pixel
        script = "<script>document.title = 'SCRIPT RAN'</script>"
        self.mail_extra = f"<p>Your code: {CODE}</p><img src='/pixel.gif' alt=''>{script}"

    def start(self) -> str:
        url = super().start()
        self.mail_extra = self.mail_extra.replace("'/pixel.gif'", f"'{url}/pixel.gif'")  # absolute, as a mail's are
        return url
