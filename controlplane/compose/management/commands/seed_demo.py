"""Create a user and a team (idempotent) and a fresh API token; optionally submit the sample
job.

Prints one JSON object (username, password, team, token, job id) for scripts and tests. Only a
hash of a token is stored, so each run makes a new "seed_demo" token and revokes the last one.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from controlplane.compose import submission, validation
from controlplane.security import tokens
from controlplane.security.models import ApiToken
from controlplane.teams.models import Membership, Role, Team

# A spot job: `make demo` preempts it once so a newcomer sees it recover from its checkpoint.
SAMPLE_JOB: dict[str, Any] = {
    "name": "sample-ddp-2-replicas",
    "strategy": "ddp",
    "spot": True,
    "args": ["--preset", "tiny", "--steps", "300", "--checkpoint-every", "50"],
    "chief": {"machine_type": "n1-standard-4", "boot_disk_type": "pd-ssd",
              "boot_disk_size_gb": 100},
    "workers": {"replica_count": 1},
}


TOKEN_NAME = "seed_demo"


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="demo-password")
        parser.add_argument("--team", default="demo")
        parser.add_argument("--role", default=Role.ADMIN, choices=[r.value for r in Role])
        parser.add_argument("--sample-job", action="store_true",
                            help="also submit the sample 2-replica DDP job")
        parser.add_argument("--steps", type=int, default=300)
        parser.add_argument("--on-demand", action="store_true",
                            help="run the sample job on STANDARD VMs instead of SPOT")

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            user_model = get_user_model()
            user, created = user_model.objects.get_or_create(username=options["username"])
            if created:
                user.set_password(options["password"])
                user.save()
            team, _ = Team.objects.get_or_create(
                slug=options["team"], defaults={"name": options["team"].replace("-", " ").title()})
            Membership.objects.update_or_create(user=user, team=team,
                                                defaults={"role": options["role"]})
            for old in ApiToken.objects.filter(user=user, name=TOKEN_NAME,
                                               revoked_at__isnull=True):
                tokens.revoke(old)
            token = tokens.create(user, TOKEN_NAME)
        out: dict[str, Any] = {"username": user.username, "password": options["password"],
                               "team": team.slug, "token": token.key, "job": None}
        if options["sample_job"]:
            request = {**SAMPLE_JOB, "spot": not options["on_demand"]}
            request["args"] = ["--preset", "tiny", "--steps", str(options["steps"]),
                               "--checkpoint-every", "50"]
            checked = validation.check(validation.read_request(request), team)
            if not checked.ok:
                raise CommandError(f"the sample job does not validate: {checked.errors}")
            job = submission.create_job(team=team, user=user, checked=checked)
            out["job"] = job.pk
        self.stdout.write(json.dumps(out))
