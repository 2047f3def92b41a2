"""A small agent built on the official A2A Python SDK (a2a-sdk 1.3.0 with starlette and uvicorn),
for the `a2a` provider's interoperability test.

Usage: python a2a_sdk_agent.py

Listens on 127.0.0.1 (a free port), prints `PORT <n>` on stdout once the socket listens, serves
until SIGTERM. What it does with a message's text:

- `ECHO <x>`: working (with a status message), then the artifact `answer` in two chunks
  (`echo: <x>`, then ` (more)` appended), then completed.
- `DATA`: the artifact `answer` with a data part `{"answer": 42}`, then completed.
- `CONTEXT`: the artifact `answer` with the task's context id, then completed (a continued
  context is seen as the same id).
- `SLOW`: working, then waits until cancelled (its cancel publishes TASK_STATE_CANCELED).
- `WAIT <ms>`: working, then after `ms` milliseconds the artifact `answer` and completed (the
  concurrency benchmark, `crates/server/benches/concurrent.rs`).
- anything else: failed, with a status message saying so.
"""

import asyncio
import socket
import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill


class Agent(AgentExecutor):
    async def execute(self, context, event_queue):
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = context.get_user_input()
        if text.startswith("ECHO "):
            said = text[len("ECHO "):]
            await updater.start_work(updater.new_agent_message([new_text_part("echoing")]))
            await updater.add_artifact([new_text_part("echo: " + said)], artifact_id="answer", name="answer")
            await updater.add_artifact(
                [new_text_part(" (more)")], artifact_id="answer", append=True, last_chunk=True
            )
            await updater.complete()
        elif text == "DATA":
            await updater.start_work()
            await updater.add_artifact([new_data_part({"answer": 42})], artifact_id="answer", name="answer")
            await updater.complete()
        elif text == "CONTEXT":
            await updater.add_artifact([new_text_part(task.context_id)], artifact_id="answer", name="answer")
            await updater.complete()
        elif text.startswith("WAIT "):
            await updater.start_work()
            await asyncio.sleep(int(text[len("WAIT "):]) / 1000)
            await updater.add_artifact([new_text_part("waited")], artifact_id="answer", name="answer")
            await updater.complete()
        elif text == "SLOW":
            await updater.start_work(updater.new_agent_message([new_text_part("waiting")]))
            await asyncio.Event().wait()
        else:
            await updater.failed(updater.new_agent_message([new_text_part("no idea what to do")]))

    async def cancel(self, context, event_queue):
        task = context.current_task
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()


async def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="sdk-agent",
        description="An agent on the official A2A Python SDK",
        supported_interfaces=[
            AgentInterface(url=base + "/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        version="0.1.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(Agent(), InMemoryTaskStore(), card)
    routes = create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/a2a")
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", backlog=4096))
    print(f"PORT {port}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
