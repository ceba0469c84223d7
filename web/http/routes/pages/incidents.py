"""The incident list: open incidents first; filters for status, service, severity and age."""

from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.orm import Session

from incidents.incident import service as incident_service
from incidents.severity import level_or_itself
from incidents.timeutil import utcnow
from web.http.deps import get_db
from web.http.routes.pages.common import page_user, render
from web.http.security import Principal

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
AGES = {
    "1h": timedelta(hours=1),
    "24h": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
MAX_PAGE = 100_000  # past any real list; keeps the offset a number every database takes
STATUS_CHOICES = {
    "all": (),
    "open": incident_service.OPEN_STATUSES,
    "triggered": ("triggered",),
    "acknowledged": ("acknowledged",),
    "resolved": ("resolved",),
}


@dataclass(frozen=True)
class Filters:
    status: str
    service: str
    severity: str
    age: str
    page: int

    @classmethod
    def parse(cls, status: str, service: str, severity: str, age: str, page: str) -> "Filters":
        """Unknown values fall back to the defaults: a hand-edited URL shows a page, not an error."""
        return cls(
            status=status if status in STATUS_CHOICES else "all",
            service=service.strip()[:255],
            severity=level_or_itself(severity.strip()[:32]),
            age=age if age in AGES else "",
            page=_page_number(page),
        )

    def query(self, page: int) -> str:
        parts = {"status": self.status, "service": self.service, "severity": self.severity, "age": self.age}
        return "?" + urlencode({k: v for k, v in parts.items() if v} | {"page": page})


def _page_number(text: str) -> int:
    """Digits (ASCII only: ``int`` refuses some Unicode digits) up to ``MAX_PAGE``, else page 1."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_PAGE)):
        return 1
    return min(max(int(text), 1), MAX_PAGE)


@router.get("/incidents", response_class=HTMLResponse)
def incident_list(
    request: Request,
    status: str = "all",
    service: str = "",
    severity: str = "",
    age: str = "",
    page: str = "1",
    principal: Principal = Depends(page_user),
    db: Session = Depends(get_db),
) -> HTMLResponse:
    filters = Filters.parse(status, service, severity, age, page)
    since = utcnow() - AGES[filters.age] if filters.age else None
    listing = incident_service.list_incidents(
        db_session=db,
        status=STATUS_CHOICES[filters.status],
        service=filters.service or None,
        severity=filters.severity or None,
        since=since,
        limit=PAGE_SIZE,
        offset=(filters.page - 1) * PAGE_SIZE,
        open_first=True,
    )
    pages = max((listing.total + PAGE_SIZE - 1) // PAGE_SIZE, 1)
    context = {
        "nav": "incidents",
        "filters": filters,
        "listing": listing,
        "pages": pages,
        "statuses": list(STATUS_CHOICES),
        "ages": list(AGES),
        "services": incident_service.distinct_services(db_session=db),
        "severities": incident_service.severity_choices(db_session=db),
        "now": utcnow(),
    }
    return render(request, "incidents.html", context, principal=principal)
