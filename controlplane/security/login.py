"""The login page, with failed attempts limited so a password cannot be guessed by trying.

Failures are counted per account (its name in NFKC, casefolded) and per client address in the
default cache (Redis when CP_CACHE_URL names one, so the count holds across web processes).
Past CP_LOGIN_MAX_FAILURES for an account, or five times that from one address, within
CP_LOGIN_LOCKOUT_S, the page answers 429 and checks no password at all until the window has
passed; a successful login clears the account's count. Refusing without checking matters: a
correct guess during the lockout must look the same as a wrong one.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

ADDRESS_FACTOR = 5


def _key(kind: str, value: str) -> str:
    # Hashed: a username is arbitrary text and cache keys are not.
    return f"login-failures:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def account_key(username: str) -> str:
    """The one spelling of an account for counters: Django's login form reads a username in
    NFKC (fullwidth "ann" logs in as "ann"), and casefolding merges the cases, so no spelling of a
    name gets a count of its own."""
    folded = unicodedata.normalize("NFKC", username.strip()).casefold()
    return unicodedata.normalize("NFKC", folded)


def _keys(request: HttpRequest) -> dict[str, str]:
    username = account_key(request.POST.get("username") or "")
    return {"account": _key("account", username),
            "address": _key("address", request.META.get("REMOTE_ADDR", ""))}


def locked_out(request: HttpRequest) -> bool:
    limit = settings.CP_LOGIN_MAX_FAILURES
    keys = _keys(request)
    counts = cache.get_many(list(keys.values()))
    return (counts.get(keys["account"], 0) >= limit
            or counts.get(keys["address"], 0) >= limit * ADDRESS_FACTOR)


def count_failure(request: HttpRequest) -> None:
    for key in _keys(request).values():
        # add() starts the window; incr() keeps it (the key keeps its first timeout).
        cache.add(key, 0, timeout=settings.CP_LOGIN_LOCKOUT_S)
        try:
            cache.incr(key)
        except ValueError:  # expired between the two calls: a new window
            cache.set(key, 1, timeout=settings.CP_LOGIN_LOCKOUT_S)


class LoginView(auth_views.LoginView):
    template_name = "security/login.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if settings.CP_LOGIN_MAX_FAILURES and locked_out(request):
            # An unbound form: a bound one would authenticate as soon as its errors are read.
            form = self.form_class(request=request,
                                   initial={"username": request.POST.get("username", "")})
            lockout = (f"Too many failed logins: try again in "
                       f"{settings.CP_LOGIN_LOCKOUT_S // 60} minutes, or ask an administrator "
                       "to reset your password.")
            return self.render_to_response(
                self.get_context_data(form=form, lockout=lockout), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        if settings.CP_LOGIN_MAX_FAILURES:
            count_failure(self.request)
        return super().form_invalid(form)

    def form_valid(self, form: Any) -> HttpResponse:
        cache.delete(_keys(self.request)["account"])
        return super().form_valid(form)


class AdminLoginView(LoginView):
    """/admin/login/ behind the same limits: Django's admin login form (staff only) and page,
    counted in the same cache as the site's login, so neither door is a way around the other."""

    template_name = "admin/login.html"
    authentication_form = AdminAuthenticationForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request))
        context.setdefault("title", "Log in")
        context.setdefault("site_header", admin.site.site_header)
        context["app_path"] = self.request.get_full_path()
        context.setdefault(REDIRECT_FIELD_NAME, self.request.GET.get(REDIRECT_FIELD_NAME)
                           or reverse("admin:index"))
        return context

    def get_default_redirect_url(self) -> str:
        return reverse("admin:index")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset by e-mail, with requests counted per address like failed logins: the
    form cannot be used to flood a mailbox or to probe addresses quickly."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limit = settings.CP_LOGIN_MAX_FAILURES
        key = _key("reset", request.META.get("REMOTE_ADDR", ""))
        if limit and (cache.get(key) or 0) >= limit:
            return HttpResponse("Too many password reset requests from this address: try "
                                "again later.", status=429, content_type="text/plain")
        if limit:
            cache.add(key, 0, timeout=settings.CP_LOGIN_LOCKOUT_S)
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, timeout=settings.CP_LOGIN_LOCKOUT_S)
        return super().post(request, *args, **kwargs)
