"""The official A2A Python SDK's client (a2a-sdk 1.3.0) against a running `subagent serve`.

Usage: python a2a_sdk_client.py BASE_URL TOKEN

Sends, streams, gets, cancels and re-subscribes as any A2A client would, then prints one JSON
line summarising what it saw (the Rust test compares it whole). It prints `SUBSCRIBED <id>` when
it has re-subscribed to a task waiting on the fake model's gate `resume` and reads one line from
stdin (the test opens the gate, then writes a line) before reading the rest of that stream.
"""

import asyncio
import json
import sys

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import A2AClientError, ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)

EXT = "urn:subagents:a2a:v1"


def as_dict(message):
    return MessageToDict(message)


def summary(event):
    """`task STATE`, `working TYPE[: text]`, `artifact ID`, or the final state."""
    if "task" in event:
        return "task " + event["task"]["status"]["state"]
    if "artifactUpdate" in event:
        return "artifact " + event["artifactUpdate"]["artifact"]["artifactId"]
    update = event["statusUpdate"]
    run_event = update.get("metadata", {}).get(EXT, {}).get("event")
    if run_event is None:
        return update["status"]["state"]
    if run_event["type"] == "text":
        return "working text: " + run_event["text"]
    return "working " + run_event["type"]


def summaries(events):
    return [s for s in map(summary, events) if s != "working usage"]


def request(text, fields=None):
    message = new_text_message(text, role=Role.ROLE_USER)
    if fields is not None:
        message.metadata.update({EXT: fields})
    return SendMessageRequest(message=message)


async def client(base, token, streaming):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    config = ClientConfig(streaming=streaming, httpx_client=http)
    return await create_client(base, client_config=config)


async def main(base, token):
    seen = {}
    blocking = await client(base, token, streaming=False)
    streaming = await client(base, token, streaming=True)

    # Send (blocking): one event, the finished task.
    [event] = [as_dict(e) async for e in blocking.send_message(request("HELLO from python"))]
    task = event["task"]
    seen["send"] = {
        "state": task["status"]["state"],
        "artifacts": task["artifacts"],
        "history": [m["parts"] for m in task["history"]],
    }

    # Get.
    got = as_dict(await blocking.get_task(GetTaskRequest(id=task["id"])))
    seen["get_same"] = got == task

    # Structured output: a data part (numbers come back as doubles in Python).
    schema = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    [event] = [
        as_dict(e)
        async for e in blocking.send_message(request("STRUCT count", {"outputSchema": schema}))
    ]
    # (A task without artifacts is shown whole: its status says what went wrong.)
    structured = event["task"]
    seen["structured"] = structured["artifacts"][0]["parts"][-1] if "artifacts" in structured else structured

    # Stream.
    events = [as_dict(e) async for e in streaming.send_message(request("HELLO stream"))]
    seen["stream"] = summaries(events)

    # Cancel a task that waits forever.
    stream = streaming.send_message(request("GATED cancel"))
    first = as_dict(await anext(stream))
    cancelled = as_dict(await blocking.cancel_task(CancelTaskRequest(id=first["task"]["id"])))
    rest = [as_dict(e) async for e in stream]
    seen["cancel"] = {"returned": cancelled["status"]["state"], "stream_end": summaries(rest)[-1]}

    # Re-subscribe after dropping a stream.
    stream = streaming.send_message(request("RESUB python"))
    before = []
    async for event in stream:
        before.append(as_dict(event))
        if summaries(before)[-1] == "working tool_result":
            break
    await stream.aclose()
    task_id = before[0]["task"]["id"]
    again = streaming.subscribe(SubscribeToTaskRequest(id=task_id))
    snapshot = as_dict(await anext(again))
    print(f"SUBSCRIBED {task_id}", flush=True)
    sys.stdin.readline()
    after = [as_dict(e) async for e in again]
    seen["resubscribe"] = {
        "before": summaries(before),
        "snapshot": snapshot["task"]["status"]["state"],
        "after": summaries(after),
    }

    # A wrong token: 401, as the SDK reports it.
    wrong = await client(base, "wrong-token", streaming=False)
    try:
        [_ async for _ in wrong.send_message(request("HELLO wrong"))]
        seen["wrong_token"] = "accepted"
    except A2AClientError as error:
        seen["wrong_token"] = "401" if "401" in str(error) else f"other: {error}"

    print(json.dumps(seen, sort_keys=True), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
