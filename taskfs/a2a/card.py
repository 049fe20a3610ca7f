"""The agent card `taskfs a2a serve` publishes at `/.well-known/agent-card.json`: who the agent
is, that it streams, what a message may carry (`params.INPUT_MODES`), the envelope's JSON Schema
as an extension, and the bearer scheme when tokens are configured."""

from __future__ import annotations

import json

from a2a.types import a2a_pb2 as pb

from taskfs import __version__
from taskfs.a2a.params import INPUT_MODES
from taskfs.api.doors.tokens import Tokens
from taskfs.api.views.intake import A2A_EXTENSION

ENVELOPE_EXTENSION = A2A_EXTENSION  # the envelope's schema is its params.schema


def agent_card(agent: str, url: str, tokens: Tokens) -> pb.AgentCard:
    from google.protobuf import struct_pb2

    from taskfs.core.envelope import envelope_json_schema

    schema = struct_pb2.Struct()
    schema.update(
        {
            "schema": json.loads(json.dumps(envelope_json_schema())),
            # SendMessage without returnImmediately waits until the task is finished or
            # interrupted (A2A 1.0 section 3.2.2), as a task is worked by agents in the
            # repository, maybe for hours.
            "sendMessageWaits": True,
        }
    )
    card = pb.AgentCard(
        name=agent,
        description=(
            f"{agent}, a taskfs agent: send a task envelope (objective, outputFormat, "
            "toolAndSourceGuidance, boundaries, filesAndInterfaces, acceptanceCheck, "
            "contextID) as a data part; a text message, or an envelope that lacks a field, "
            "is kept as a request waiting for input, naming what is missing. The task "
            "completes only with passing evidence of its acceptance check, kept in git. "
            "SendMessage waits, as A2A 1.0 asks by default, until the task is finished or "
            "interrupted (input-required); set configuration.returnImmediately for the task "
            "at once, or stream it."
        ),
        version=__version__,
        supported_interfaces=[
            pb.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=pb.AgentCapabilities(
            streaming=True,
            extensions=[
                pb.AgentExtension(
                    uri=ENVELOPE_EXTENSION,
                    description="A SendMessage that opens a task carries a taskfs envelope "
                    "(this JSON Schema) as a data part. Stream events carry the ledger's id "
                    "as metadata.eventId; resume with the header Last-Event-ID.",
                    required=False,
                    params=schema,
                )
            ],
        ),
        default_input_modes=list(INPUT_MODES),
        default_output_modes=["application/json", "text/plain"],
        skills=[
            pb.AgentSkill(
                id="taskfs-envelope",
                name="Delegated task with an acceptance check",
                description=(
                    "Opens a task from an envelope with the eight fields: objective, "
                    "outputFormat, toolAndSourceGuidance, boundaries, filesAndInterfaces "
                    "(a list), acceptanceCheck.passFailCommand, "
                    "acceptanceCheck.endToEndVerification, contextID. `from` is the caller; "
                    f"`to` is {agent}. Text is kept as a request (input-required) until the "
                    "envelope arrives on its task id."
                ),
                tags=["taskfs", "envelope", "acceptance-check", "git"],
                input_modes=list(INPUT_MODES),
                output_modes=["application/json", "text/plain"],
            )
        ],
    )
    if tokens.configured:
        card.security_schemes["bearer"].CopyFrom(
            pb.SecurityScheme(
                http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
                    scheme="bearer",
                    description="Bearer authentication: the operator maps each bearer value "
                    "to an agent name",
                )
            )
        )
        requirement = pb.SecurityRequirement()
        requirement.schemes["bearer"].CopyFrom(pb.StringList())
        card.security_requirements.append(requirement)
    return card
