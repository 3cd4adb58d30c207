"""Principals, their keys and capabilities, and console users with personal tokens."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from reconcile_app.choices import PrincipalKind, Role
from reconcile_app.epochs import EpochCache, Epochs, epochs_held, epochs_repin
from reconcile_app.errors import Conflict, DomainError, ValidationFailed
from reconcile_app.limits import identifier_problem, reason_length_check, says_nothing
from reconcile_app.models import ApiKey, Capability, Principal
from reconcile_app.roles import roles_forget
from reconcile_app.services.audit import audit_record
from reconcile_app.services.key_use import api_key_note_use, key_in_use

KEY_PREFIX = "rk"
PEOPLE_ROLES = (Role.OPERATOR, Role.REVIEWER, Role.AUDITOR)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def api_key_issue(*, principal: Principal) -> str:
    """Create a key and return it; only its hash is kept, so this is the only time it exists."""
    prefix = secrets.token_hex(4)
    secret = secrets.token_urlsafe(32)
    key = f"{KEY_PREFIX}_{prefix}_{secret}"
    ApiKey.objects.create(principal=principal, prefix=prefix, key_hash=_digest(key))
    return key


def api_keys_revoke(*, principal: Principal) -> list[str]:
    """Revoke every key the principal holds (an agent's keys, a person's tokens); returns
    their prefixes, sorted, for the audit row."""
    live = ApiKey.objects.filter(principal=principal, revoked_at__isnull=True)
    prefixes = sorted(live.values_list("prefix", flat=True))
    live.update(revoked_at=timezone.now())
    return prefixes


# Unrevoked keys by prefix (with principal and user), while the configuration epoch holds.
_KEYS_BY_PREFIX: EpochCache[ApiKey | None] = EpochCache("configuration")


def api_key_prefix(raw_key: str) -> str | None:
    """The prefix a key is listed by (`rk_<prefix>_<secret>`), or None for no key's shape."""
    parts = raw_key.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        return None
    return parts[1]


def api_key_authenticate(raw_key: str) -> Principal | None:
    prefix = api_key_prefix(raw_key)
    if prefix is None:
        return None
    key = _KEYS_BY_PREFIX.get(
        prefix,
        lambda: (
            ApiKey.objects.select_related("principal__user")
            .filter(prefix=prefix, revoked_at__isnull=True)
            .first()
        ),
    )
    if key is None or not hmac.compare_digest(key.key_hash, _digest(raw_key)):
        return None
    principal = key.principal
    if principal.disabled_at is not None or not principal.user.is_active:
        return None
    api_key_note_use(prefix=prefix)
    key_in_use.set((principal.pk, prefix))
    return principal


def access_held(principal_id: int) -> None:
    """Inside a transaction holding the epochs (epochs.epochs_held), once the configuration
    epoch moved since the request was authenticated: 401 `authentication_failed` if the
    principal was disabled, its user deactivated or the key that opened the request revoked
    meanwhile. Each of those moves the epoch in its own transaction, so it committed and is
    seen here, or waits for this one (which was then authorised first)."""
    still = Principal.objects.filter(
        pk=principal_id, disabled_at__isnull=True, user__is_active=True
    )
    in_use = key_in_use.get()
    if in_use is not None and in_use[0] == principal_id:
        still = still.filter(keys__prefix=in_use[1], keys__revoked_at__isnull=True)
    if not still.exists():
        raise DomainError(
            "access was taken back while the request ran (key revoked or principal disabled)",
            code="authentication_failed",
            status=401,
            title="Authentication failed",
        )


def access_changed_since(principal: Principal, seen: Epochs) -> bool:
    """First in a write's transaction: the epochs held until it ends, so an access change
    waits for the write or committed before it. One committed since the request pinned
    `seen` moved the configuration epoch: then the principal is checked again (401 if its
    key was revoked or it was disabled meanwhile), its roles are read afresh, and True tells
    the caller to ask its own capability again, on what is current now."""
    if epochs_held().configuration == seen.configuration:
        return False
    epochs_repin()
    access_held(principal.pk)
    roles_forget(principal.user)
    return True


def parse_capability(text: str) -> tuple[str, str]:
    """`DECISION_CLASS:ACTION`, `attest:SOURCE` or `fact:PATTERN` → (kind, name)."""
    decision_class, sep, action = text.partition(":")
    if not sep or not decision_class or not action:
        raise ValidationFailed(
            f"capability {text!r} must be DECISION_CLASS:ACTION, attest:SOURCE or fact:PATTERN",
            code="invalid_capability",
        )
    problem = identifier_problem(action)
    if problem is not None:
        raise ValidationFailed(f"capability {text!r}: {problem}", code="invalid_capability")
    if "*" in action and decision_class not in ("attest", "fact"):
        # A wildcard would grant every action a later contract version adds, unreviewed.
        raise ValidationFailed(
            f"capability {text!r} must name one action (no wildcard)", code="invalid_capability"
        )
    return decision_class, action


def _role_groups(roles: Iterable[str]) -> list[Group]:
    return [Group.objects.get_or_create(name=str(role))[0] for role in roles]


def _user_new(*, username: str, password: str | None = None) -> User:
    """The account, or 409 `name_taken`: two runs at once for one name both found it free
    (the check is the caller's), and the second breaks the username's unique index here."""
    try:
        return User.objects.create_user(username=username, password=password)
    except IntegrityError as exc:
        raise Conflict(f"a principal or user named {username!r} exists", code="name_taken") from exc


# Principal.name and the username column.
MAX_NAME_LENGTH = 150


def principal_name(name: str) -> str:
    """The name a new agent or person is created under, or 400 `invalid_name` / 409
    `name_taken`.

    NFKC first, as Django normalises the account's username: "rhys" typed in fullwidth
    letters became user "rhys" under a fullwidth principal, so the audit trail and the
    approval pages named one actor two ways. The name is read on approval pages, audit
    rows and log lines, so it follows the identifier rules: a U+202E in it reversed the
    sentence that says who asks what on which subject. A name longer than the columns was
    a DataError traceback on PostgreSQL (SQLite stored it), an empty one a ValueError.
    Names equal but for case ("Rhys" beside "rhys", "STRASSE" beside "straße") are one
    name to a reader, and sign-in throttling already counts them as one.
    """
    name = unicodedata.normalize("NFKC", name)
    problem = None if len(name) <= MAX_NAME_LENGTH else f"is over {MAX_NAME_LENGTH} characters"
    problem = problem or identifier_problem(name)
    if problem is not None:
        raise ValidationFailed(f"the name {name!r} {problem}", code="invalid_name")
    folded = name.casefold()
    # Creating a principal is rare and the table small: compared here, case folded alike on
    # SQLite and PostgreSQL (their lower() and LIKE fold differently beyond ASCII).
    for taken in User.objects.values_list("username", flat=True).iterator():
        if taken.casefold() == folded:
            same = "" if taken == name else " (names that differ only in case are one name)"
            raise Conflict(f"a principal or user named {taken!r} exists{same}", code="name_taken")
    return name


def grant_reason(reason: str) -> str:
    """Why access is granted, for its audit row. Optional (the commands ran without one
    before), but one given must say something and fit, as any reason must."""
    if reason and says_nothing(reason):
        raise ValidationFailed("the reason says nothing: give it in words", code="reason_required")
    reason_length_check(reason)
    return reason.strip()


def principal_create(
    *, name: str, capabilities: Iterable[str], actor: object = None, reason: str = ""
) -> tuple[Principal, str]:
    """Create an agent principal with its capabilities; returns it and its one-time key."""
    reason = grant_reason(reason)
    parsed = [parse_capability(text) for text in capabilities]
    with transaction.atomic():
        name = principal_name(name)
        if Principal.objects.filter(name=name).exists():
            raise Conflict(f"a principal or user named {name!r} exists", code="name_taken")
        user = _user_new(username=name)
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.set(_role_groups([Role.AGENT]))
        principal = Principal.objects.create(name=name, kind=PrincipalKind.AGENT, user=user)
        Capability.objects.bulk_create(
            Capability(principal=principal, decision_class=dc, action=action)
            for dc, action in dict.fromkeys(parsed)
        )
        key = api_key_issue(principal=principal)
        audit_record(
            actor=actor,
            action="principal.create",
            object_kind="principal",
            object_ref=name,
            reason=reason,
            after={"kind": "agent", "capabilities": [f"{dc}:{a}" for dc, a in parsed]},
        )
    return principal, key


def capabilities_grant(
    *, principal: Principal, capabilities: Iterable[str], actor: object = None
) -> list[str]:
    """Add the capabilities the principal lacks; returns those added (audited when any)."""
    parsed = [parse_capability(text) for text in capabilities]
    held = set(principal.capabilities.values_list("decision_class", "action"))
    missing = [pair for pair in dict.fromkeys(parsed) if pair not in held]
    if not missing:
        return []
    with transaction.atomic():
        Capability.objects.bulk_create(
            Capability(principal=principal, decision_class=dc, action=action)
            for dc, action in missing
        )
        added = [f"{dc}:{action}" for dc, action in missing]
        audit_record(
            actor=actor,
            action="principal.grant",
            object_kind="principal",
            object_ref=principal.name,
            after={"added": added},
        )
    return added


def user_create(
    *,
    username: str,
    roles: Iterable[str],
    password: str | None = None,
    actor: object = None,
    reason: str = "",
) -> tuple[User, str]:
    """Create a person in the given roles with a personal API token; returns both."""
    reason = grant_reason(reason)
    roles = list(dict.fromkeys(roles))
    for role in roles:
        if role not in PEOPLE_ROLES:
            raise ValidationFailed(
                f"group must be one of {', '.join(PEOPLE_ROLES)}", code="invalid_group"
            )
    with transaction.atomic():
        username = principal_name(username)
        if Principal.objects.filter(name=username).exists():
            raise Conflict(f"user {username!r} exists", code="name_taken")
        if password is not None:
            try:
                validate_password(password, User(username=username))
            except DjangoValidationError as exc:
                raise ValidationFailed(" ".join(exc.messages), code="weak_password") from exc
        user = _user_new(username=username, password=password)
        if password is None:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        user.groups.set(_role_groups(roles))
        principal = Principal.objects.create(name=username, kind=PrincipalKind.PERSON, user=user)
        token = api_key_issue(principal=principal)
        audit_record(
            actor=actor,
            action="user.create",
            object_kind="user",
            object_ref=username,
            reason=reason,
            after={"roles": [str(role) for role in roles], "token_issued": True},
        )
    return user, token


def principal_acting(user: Any, auth: Any) -> Principal:
    """The principal acting on an API request: the bearer key's, or the session user's
    (created on first use for a person, which is why this is a service, not a selector)."""
    if isinstance(auth, Principal):
        return auth
    return principal_for_user(user)


def principal_for_user(user: User) -> Principal:
    """The principal behind a console session (created on first use for superusers)."""
    principal = Principal.objects.filter(user=user).first()
    if principal is None:
        principal, _ = Principal.objects.get_or_create(
            user=user, defaults={"name": user.username, "kind": PrincipalKind.PERSON}
        )
    return principal
