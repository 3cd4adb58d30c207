"""Login with throttling: repeated failures for one username or one address are refused."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError

from reconcile_app.security import failure_count, failure_limit, failure_record, failures_clear


def _client_ip(request: Any) -> str:
    return str(request.META.get("REMOTE_ADDR", "unknown"))


class ThrottledAuthenticationForm(AuthenticationForm):
    error_messages = {
        **AuthenticationForm.error_messages,
        "throttled": "Too many failed sign-ins. Wait 15 minutes and try again.",
    }

    def clean(self) -> dict[str, Any]:
        username = str(self.data.get("username", "")).strip().lower()
        address = _client_ip(self.request)
        limit = failure_limit("login")
        if failure_count("login-user", username) >= limit or (
            failure_count("login-ip", address) >= limit * 4
        ):
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
