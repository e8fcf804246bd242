#!/usr/bin/env python3
"""A loopback Anthropic Messages API for the Claude Code contract tests (standard library only).

    mock_anthropic.py PORT_FILE PLAN_FILE LOG_FILE

Listens on 127.0.0.1 at a port the kernel picks, and writes that port to PORT_FILE once it
accepts connections. Answers:
- POST /v1/messages (streamed as server-sent events when the request asks, else whole),
- POST /v1/messages/count_tokens,
and 404 to anything else. Every request is logged to LOG_FILE, one JSON line each. It exits
when the process that started it has gone, so that no mock outlives a test that was cut short.

The plan (PLAN_FILE, JSON) is an object whose keys are texts and whose values are lists of
steps; a request belongs to the first key its first user message contains (the prompt of
`claude -p`, or the prompt the Agent tool gave a sub-agent), and gets the step whose index is
the number of assistant turns already in the request, so that each conversation, the main
one and every sub-agent's, follows its own list whatever order the requests come in. A step
is {"text": T} (a final answer), {"tool": NAME, "input": {...}} (a tool call), or
{"stall": SECONDS} (headers sent, then nothing: a turn that hangs). A request whose
conversation has no key, or has run past its list, gets the text "ok". A request without
tools (a title, a summary) gets a short text.
"""
import json
import os
import sys
import threading
import time

# the shared part, beside this dir; no bytecode written into the source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mockhttp  # noqa: E402

PORT_FILE, PLAN_FILE, LOG_FILE = sys.argv[1:4]
with open(PLAN_FILE) as f:
    PLAN = json.load(f)


def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict) and part.get("type") == "text":
            out.append(part.get("text", ""))
    return "\n".join(out)


def step_for(body):
    msgs = body.get("messages") or []
    if not body.get("tools"):
        return "title", {"text": "contract title"}
    first = next((m for m in msgs if m.get("role") == "user"), None)
    turns = sum(1 for m in msgs if m.get("role") == "assistant")
    prompt = text_of(first.get("content")) if first else ""
    for key, steps in PLAN.items():
        if key in prompt:
            if turns < len(steps):
                return key, steps[turns]
            return key, {"text": "ok"}
    return None, {"text": "ok"}


class Handler(mockhttp.Handler):
    def do_GET(self):
        self.reply_json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)

    def do_POST(self):
        body, _ = self.read_json()
        if body is None:
            return self.reply_json({"type": "error", "error": {"type": "invalid_request_error",
                                                               "message": "not JSON"}}, 400)
        path = self.path.split("?", 1)[0]
        if path.endswith("/v1/messages/count_tokens"):
            self.log(path, body, None, None)
            return self.reply_json({"input_tokens": 10})
        if not path.endswith("/v1/messages"):
            self.log(path, body, None, None)
            return self.do_GET()
        key, step = step_for(body)
        self.log(path, body, key, step)
        if "tool" in step:
            turn = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
            content = [{"type": "tool_use", "id": "toolu_contract_%d_%d" % (abs(hash(key)) % 10**6, turn),
                        "name": step["tool"], "input": step.get("input", {})}]
            stop = "tool_use"
        else:
            content = [{"type": "text", "text": step.get("text", "ok")}]
            stop = "end_turn"
        msg = {"id": "msg_contract_%d" % int(time.time() * 1e6), "type": "message", "role": "assistant",
               "model": body.get("model", "claude"), "content": content, "stop_reason": stop,
               "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
        if "stall" in step:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
            time.sleep(float(step["stall"]))
            self.close_connection = True
            return
        if not body.get("stream"):
            return self.reply_json(msg)
        self.start_events()
        event = self.event
        event("message_start", {"type": "message_start", "message": dict(msg, content=[], stop_reason=None)})
        for i, block in enumerate(content):
            if block["type"] == "text":
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": block["text"]}})
            else:
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": dict(block, input={})})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(block["input"])}})
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5}})
        event("message_stop", {"type": "message_stop"})
        self.wfile.flush()
        self.close_connection = True

    def log(self, path, body, key, step):
        mockhttp.append_log(LOG_FILE, {
            "path": path, "model": body.get("model"), "stream": bool(body.get("stream")),
            "messages": len(body.get("messages") or []), "tools": len(body.get("tools") or []),
            "conversation": key, "step": step})


def watch_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
mockhttp.serve(Handler, 0, PORT_FILE)
