"""Every table, imported in one place so Alembic and the engine see the whole schema."""

from incidents.alerts.models import Alert
from incidents.auth.models import ApiToken, User
from incidents.briefings.models import Briefing, Job
from incidents.confidence.models import ConfidenceFit
from incidents.database import Base
from incidents.delivery.models import Delivery, DeliveryChannel
from incidents.drafts.models import Draft
from incidents.grades.models import BriefingGrade
from incidents.incident.models import Counter, Incident, IncidentEvent
from incidents.labels.models import RelevanceLabel
from incidents.profile.models import ProfileState
from incidents.resolution.models import Correction, OutboxEntry, Resolution
from incidents.service_memory.models import ServiceMemory

__all__ = [
    "Alert",
    "ApiToken",
    "Base",
    "Briefing",
    "BriefingGrade",
    "ConfidenceFit",
    "Correction",
    "Counter",
    "Delivery",
    "DeliveryChannel",
    "Draft",
    "Incident",
    "IncidentEvent",
    "Job",
    "OutboxEntry",
    "ProfileState",
    "RelevanceLabel",
    "Resolution",
    "ServiceMemory",
    "User",
]
