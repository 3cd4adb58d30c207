"""Login with throttling: repeated failures for one username or one address are refused.

This is the only sign-in form the product serves (there is no Django admin), so the
per-username count here is the whole lockout.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError

from reconcile_app.security import (
    client_address,
    failure_count,
    failure_limit,
    failure_record,
    failures_clear,
)

# Many people may sign in from behind one proxy: the address cap only stops one address
# cycling through usernames, well above what a few honest typos add up to.
ADDRESS_LIMIT_FACTOR = 4


class ThrottledAuthenticationForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "throttled": "Too many failed sign-ins. Wait 15 minutes and try again.",
    }

    def clean(self) -> dict[str, Any]:
        # Normalised as the username field normalises it (NFKC: fullwidth "ada" signs in as "ada"),
        # then case-folded, so every spelling of one account draws on one budget of guesses.
        username = unicodedata.normalize("NFKC", str(self.data.get("username", ""))).strip()
        username = username.casefold()
        address = client_address(self.request) if self.request is not None else "unknown"
        limit = failure_limit("login")
        if failure_count("login-user", username) >= limit or (
            failure_count("login-ip", address) >= limit * ADDRESS_LIMIT_FACTOR
        ):
            # Checked before the password: once locked, the right password is refused too.
            raise ValidationError(self.error_messages["throttled"], code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError:
            failure_record("login-user", username)
            failure_record("login-ip", address)
            raise
        failures_clear("login-user", username)
        return cleaned


class ThrottledLoginView(LoginView):
    form_class = ThrottledAuthenticationForm
