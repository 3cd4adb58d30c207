"""A bulk job's page in the console: its progress and items, re-read while it runs, and an
operator's cancellation (the preview that starts a job is views/bulk.py)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import EmptyPage, PageNotAnInteger
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views import View

from reconcile_app.choices import BulkJobKind, BulkJobStatus, Role
from reconcile_app.console.messages import console_message, hx_trigger
from reconcile_app.console.mixins import (
    MAX_POLLS,
    PER_PAGE,
    POLL_SECONDS,
    OperatorRequiredMixin,
    StaffRequiredMixin,
    is_htmx,
    not_found_is_404,
    polls,
)
from reconcile_app.console.tables.bulk import JobItemTable
from reconcile_app.errors import DomainError
from reconcile_app.request_id import request_id_of
from reconcile_app.roles import has_role
from reconcile_app.selectors.bulk import job_get, job_items
from reconcile_app.services.bulk_jobs import bulk_job_cancel


class JobDetailView(StaffRequiredMixin, View):
    """A job's progress and items; htmx polls the region while the job runs."""

    template_name = "reconcile_app/job_detail.html"
    partial_template_name = "reconcile_app/partials/job_region.html"

    def get(self, request: HttpRequest, job_id: str) -> HttpResponse:
        with not_found_is_404():
            job = job_get(job_id=job_id)
        asked = polls(request)
        running = job.status == BulkJobStatus.RUNNING
        table = JobItemTable(job_items(job), request=request, kind=job.kind)
        # A page number from the URL is the reader's to mistype: show the nearest real page,
        # as the lists do (django-tables2's RequestConfig), never a server error.
        try:
            table.paginate(page=request.GET.get("page", 1), per_page=PER_PAGE)
        except PageNotAnInteger:
            table.page = table.paginator.page(1)
        except EmptyPage:
            table.page = table.paginator.page(table.paginator.num_pages)
        query: dict[str, Any] = {"polls": asked + 1}
        if table.page.number > 1:
            query["page"] = table.page.number
        context = {
            "job": job,
            "table": table,
            "polling": running and asked < MAX_POLLS,
            "gave_up": running and asked >= MAX_POLLS,
            "poll_seconds": POLL_SECONDS,
            "poll_url": f"{reverse('console-job', args=[job.job_id])}?{urlencode(query)}",
            "list_url": job_list_url(job),
            "can_cancel": running and has_role(request.user, Role.OPERATOR),
            # The cancel form lies outside the polled region (a reason being typed stays):
            # the poll that finds the job ended takes it away too, out of band.
            "drop_cancel_form": not running and is_htmx(request),
        }
        template = self.partial_template_name if is_htmx(request) else self.template_name
        response = TemplateResponse(request, template, context)
        response["Vary"] = "HX-Request"
        if context["drop_cancel_form"]:
            # The polled region is replaced whole (a live region inside it is not announced):
            # the poll that finds the job ended says so in the page's live region.
            processed = f"{job.processed} of {job.count} processed, {job.failed} failed"
            ended = console_message("success", f"Job {job.status}: {processed}.")
            response["HX-Trigger"] = hx_trigger(message=ended)
        return response


class JobCancelView(OperatorRequiredMixin, View):
    """An operator stops a running job, with a reason; audited by the service. A plain form
    post, redirected back to the job's page with what happened."""

    def post(self, request: HttpRequest, job_id: str) -> HttpResponse:
        try:
            with not_found_is_404():
                job = bulk_job_cancel(
                    job_id=job_id,
                    actor=request.user,
                    reason=request.POST.get("reason", ""),
                    request_id=request_id_of(request),
                )
        except DomainError as exc:
            messages.error(request, exc.detail)
        else:
            messages.success(
                request,
                f"Job {job.job_id} cancelled: the rows it had not reached will not be acted on.",
            )
        return redirect("console-job", job_id=job_id)


def job_list_url(job: Any) -> str:
    """The list the job was started from, with the filters it was started with (a job of
    picked rows goes back to the list's default view)."""
    name = "console-effects" if job.kind == BulkJobKind.EFFECTS else "console-contradictions"
    asked = job.selection.get("filter") if isinstance(job.selection, dict) else None
    if not isinstance(asked, dict):
        return reverse(name)
    # As stored: each filter's values, a list (selectors/bulk.py).
    query = {
        key: [value for value in values if isinstance(value, str) and value]
        for key, values in asked.items()
        if isinstance(values, list)
    }
    query = {key: values for key, values in query.items() if values}
    query.setdefault("status", ["all"])
    return f"{reverse(name)}?{urlencode(query, doseq=True)}"
