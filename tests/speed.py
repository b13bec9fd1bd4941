#!/usr/bin/env python3
"""Benchmark of the client, the scripts and the skill against the local test portal.

Run from the repository root: ``python3 tests/speed.py [--rtt 50] [--repeat N]``. Prints one
Markdown table and a list of targets met or missed. Not a test module (pytest collects only
``test_*.py``); it never contacts anything but 127.0.0.1.
"""

import argparse
import datetime
import itertools
import json
import os
import platform
import queue
import re
import secrets
import shlex
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from urllib.parse import urlencode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path[:0] = [ROOT, SCRIPTS]

from benchmarks_wiki import Client  # noqa: E402
from tests.certs import CA_FILE  # noqa: E402
from benchmarks_wiki.sandbox import Catalogue  # noqa: E402
from tests.faults import Portal, large_catalogue  # noqa: E402

try:
    import requests
except ImportError:
    requests = None

PAGED = 2000
START = datetime.datetime(2026, 11, 30, 9, 0, 0, tzinfo=datetime.timezone.utc)
TLS = ssl.create_default_context(cafile=CA_FILE)
# Proxies from the environment would send the baselines off this machine.
URLLIB = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                     urllib.request.HTTPSHandler(context=TLS))
FLOOR = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1]).read().decode())"
NOTES = ("Solved with greedy decoding, one attempt, no tools.\n\nThe model multiplied trays by "
         "muffins first, then subtracted the gift; the arithmetic checks out step by step.\n")


# -- measuring ------------------------------------------------------------------------------

def race(contenders, repeat):
    """Median seconds and last result of each contender. Every repetition runs all of them in
    turn, so a slow spell of the machine slows them alike and their ratios hold."""
    times = {name: [] for name in contenders}
    # One untimed run each first: bytecode, TLS and import caches warm, as on a machine in use.
    results = {name: measure() for name, measure in contenders.items()}
    names = list(contenders)
    for turn in range(repeat):
        # Rotating who goes first keeps a warm cache from always favouring the same one.
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            start = time.perf_counter()
            results[name] = contenders[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(spent) for name, spent in times.items()}, results


def seconds(value):
    return "%.2f s" % value if value >= 1 else "%.1f ms" % (value * 1000)


def run(argv, env):
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, timeout=60)
    if done.returncode:
        raise SystemExit("%s failed (%d): %s" % (" ".join(argv), done.returncode,
                                                  done.stderr.decode(errors="replace")))
    return done


def script(name, *args, folder="scripts"):
    return [sys.executable, os.path.join(folder, name), *args]


def script_env(origin, scratch, **extra):
    env = {key: value for key, value in os.environ.items()
           if not (key.startswith("BENCHMARKS_WIKI_") or key.lower().endswith("_proxy")
                   or key == "PYTHONDONTWRITEBYTECODE")}
    # Bytecode cached as on any installed copy, but in scratch so the tree is left alone.
    env.update(SSL_CERT_FILE=CA_FILE, BENCHMARKS_WIKI_ORIGIN=origin,
               XDG_STATE_HOME=os.path.join(scratch, "state"),
               PYTHONPYCACHEPREFIX=os.path.join(scratch, "pycache"), **extra)
    return env


class FakeTime:
    """A clock that moves only when the follower sleeps, so no real time passes."""

    def __init__(self):
        self.now, self.sleeps = 0.0, 0

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps += 1
        self.now += seconds


class DelayRelay:
    """A TCP relay on 127.0.0.1 holding each chunk for rtt/2 in each direction, so that round
    trips cost what they cost on a real network."""

    def __init__(self, target_port, rtt):
        self.target_port, self.delay = target_port, rtt / 2
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.origin = "https://127.0.0.1:%d" % self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        # shutdown wakes the accept() that close() alone would leave blocked.
        self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        # The kernel accepted at once; a real connect costs a round trip before the first byte.
        time.sleep(2 * self.delay)
        with client, socket.create_connection(("127.0.0.1", self.target_port)) as upstream:
            pumps = [threading.Thread(target=self._pump, args=pair, daemon=True)
                     for pair in ((client, upstream), (upstream, client))]
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for pump in pumps:
                pump.start()
            for pump in pumps:
                pump.join()

    def _pump(self, source, sink):
        # Reading and writing apart makes the delay a latency: back-to-back chunks overlap.
        chunks = queue.Queue()

        def read():
            data = b"-"
            while data:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                chunks.put((time.monotonic() + self.delay, data))

        threading.Thread(target=read, daemon=True).start()
        while True:
            due, data = chunks.get()
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except OSError:
                return


# -- the contenders -------------------------------------------------------------------------

def page_ours(origin):
    with Client(origin, ssl_context=TLS) as client:
        return list(itertools.islice(client.tasks("big"), PAGED))


def page_urllib(origin):
    """What a stdlib user writes first: urlopen in a loop, a new connection per page."""
    url, items = origin + "/api/v1/benchmarks/big/tasks?limit=100", []
    while len(items) < PAGED:
        with URLLIB.open(url) as answer:
            page = json.load(answer)
        items += page["items"]
        url = origin + "/api/v1/benchmarks/big/tasks?" + urlencode(
            {"limit": 100, "cursor": page["next_cursor"]})
    return items[:PAGED]


def page_requests(origin):
    with requests.Session() as session:
        session.trust_env, session.verify = False, CA_FILE
        params, items = {"limit": 100}, []
        while len(items) < PAGED:
            page = session.get(origin + "/api/v1/benchmarks/big/tasks", params=params).json()
            items += page["items"]
            params["cursor"] = page["next_cursor"]
        return items[:PAGED]


def counted(portal, fetch, origin):
    """Run fetch, returning what the portal saw: connections opened and requests."""
    def run_it():
        portal.reset_counters()
        assert len(fetch(origin)) == PAGED
        return portal.connections, len(portal.requests)
    return run_it


def publish_ours(origin, task_id):
    with Client(origin, ssl_context=TLS) as client:
        return client.publish("A result, sent through the delay relay.", task_id=task_id)


def publish_urllib(origin, task_id):
    query = urlencode({"body": "A result, sent through the delay relay.", "task_id": task_id,
                       "nonce": secrets.token_urlsafe(18)})
    with URLLIB.open(origin + "/api/v1/publish?" + query) as answer:
        return answer.read()


# -- the rows -------------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.rows, self.targets = [], []

    def row(self, measure, ours, baseline="—", other="—", ratio="—"):
        self.rows.append((measure, ours, baseline, other, ratio))

    def target(self, passed, text):
        verdict = "SKIP" if passed is None else "PASS" if passed else "MISS"
        self.targets.append((verdict, text))

    def print(self):
        print("| measure | ours | stdlib baseline | other | ours vs baseline |")
        print("| --- | --- | --- | --- | --- |")
        for cells in self.rows:
            print("| " + " | ".join(cells) + " |")
        print("\n## Targets\n")
        for verdict, text in self.targets:
            print("- **%s** %s" % (verdict, text))


def paging(report, portal, repeat):
    contenders = {"ours": counted(portal, page_ours, portal.origin),
                  "urllib": counted(portal, page_urllib, portal.origin)}
    if requests:
        contenders["requests"] = counted(portal, page_requests, portal.origin)
    spent, seen = race(contenders, repeat)
    cell = {name: "%s, %d conn" % (seconds(spent[name]), seen[name][0]) for name in spent}
    other = "requests.Session: " + cell["requests"] if requests else "requests: not installed"
    report.row("Paging %s problems, loopback" % format(PAGED, ","), cell["ours"],
               "urllib loop: " + cell["urllib"], other,
               "%.1fx faster" % (spent["urllib"] / spent["ours"]))
    if requests:
        report.target(spent["ours"] <= spent["requests"],
                      "paging no slower than requests.Session: %s vs %s"
                      % (seconds(spent["ours"]), seconds(spent["requests"])))
    else:
        report.target(None, "paging no slower than requests.Session: requests not installed")


def latency(report, portal, repeat, rtt):
    relay = DelayRelay(portal.port, rtt / 1000)
    try:
        spent, seen = race({"ours": counted(portal, page_ours, relay.origin),
                            "urllib": counted(portal, page_urllib, relay.origin)}, repeat)
        task_id = portal.catalogue.tasks["big"][0]["task_id"]
        posted, _ = race({"ours": lambda: publish_ours(relay.origin, task_id),
                          "urllib": lambda: publish_urllib(relay.origin, task_id)}, repeat)
    finally:
        relay.close()
    faster = spent["urllib"] / spent["ours"]
    report.row("Paging %s problems, RTT %g ms" % (format(PAGED, ","), rtt),
               "%s, %d conn, %d req" % ((seconds(spent["ours"]),) + seen["ours"]),
               "urllib loop: %s, %d conn, %d req" % ((seconds(spent["urllib"]),) + seen["urllib"]),
               ratio="%.1fx faster" % faster)
    report.row("One publish, RTT %g ms" % rtt, seconds(posted["ours"]),
               "urllib: " + seconds(posted["urllib"]),
               ratio="%.2fx the time" % (posted["ours"] / posted["urllib"]))
    report.target(faster >= 3, "paging at RTT %g ms at least 3x faster than the urllib loop: "
                  "%.1fx (%s vs %s)" % (rtt, faster, seconds(spent["ours"]), seconds(spent["urllib"])))


def one_problem(report, portal, repeat, env):
    task_id = portal.catalogue.tasks["big"][0]["task_id"]
    url = "%s/api/v1/tasks/%s" % (portal.origin, task_id)
    contenders = {"ours": lambda: run(script("draw.py", "task", task_id, "--no-journal"), env),
                  "floor": lambda: run([sys.executable, "-c", FLOOR, url], env)}
    curl = shutil.which("curl")
    if curl:
        contenders["curl"] = lambda: run([curl, "-s", "--noproxy", "*", "--cacert", CA_FILE, url], env)
    spent, _ = race(contenders, repeat)
    ratio = spent["ours"] / spent["floor"]
    report.row("One problem, whole process", "draw.py task: " + seconds(spent["ours"]),
               "urlopen one-liner: " + seconds(spent["floor"]),
               "curl -s: " + seconds(spent["curl"]) if curl else "curl: not installed",
               "%.2fx the floor" % ratio)
    report.target(ratio <= 1.5, "draw.py task within 1.5x of the stdlib floor: %.2fx (%s vs %s)"
                  % (ratio, seconds(spent["ours"]), seconds(spent["floor"])))


def import_profile(env):
    """Microseconds spent importing the top-level benchmarks_wiki modules, and the
    (cumulative µs, module) of every import beneath them."""
    lines = run([sys.executable, "-X", "importtime", "-c", "import benchmarks_wiki.cli"],
                env).stderr.decode().splitlines()
    total, beneath, block = 0, [], []
    # The listing is post-order: a module's imports come just before it, indented.
    for line in lines[1:]:
        _, cumulative, name = line.split("|")
        module = name.strip()
        if len(name) - len(name.lstrip(" ")) > 1:
            block.append((int(cumulative), module))
            continue
        if module.startswith("benchmarks_wiki"):
            total += int(cumulative)
            beneath += block
        block = []
    return total, sorted(beneath, reverse=True)


def start_up(report, repeat, env):
    uncached = dict(env, PYTHONDONTWRITEBYTECODE="1")
    del uncached["PYTHONPYCACHEPREFIX"]
    spent, _ = race({"ours": lambda: run(script("draw.py", "--help"), env),
                     "bare": lambda: run([sys.executable, "-c", "pass"], env),
                     "uncached": lambda: run(script("draw.py", "--help"), uncached)}, repeat)
    ratio = spent["ours"] / spent["bare"]
    report.row("Start-up", "draw.py --help: " + seconds(spent["ours"]),
               "python3 -c pass: " + seconds(spent["bare"]),
               "draw.py --help, no bytecode cache: %s (%.2fx bare)"
               % (seconds(spent["uncached"]), spent["uncached"] / spent["bare"]),
               "%.2fx bare" % ratio)
    importing = dict(env, PYTHONPATH=SCRIPTS)
    profiles = sorted(import_profile(importing) for _ in range(repeat))
    total, beneath = profiles[len(profiles) // 2]
    costliest = ", ".join("%s %.1f ms" % (module, us / 1000) for us, module in beneath[:5])
    report.row("Import benchmarks_wiki.cli", "%.1f ms" % (total / 1000),
               other="costliest beneath: " + costliest)
    report.target(ratio <= 1.3, "draw.py --help within 1.3x of a bare interpreter: %.2fx (%s vs %s); "
                  "%.2fx without a bytecode cache" % (ratio, seconds(spent["ours"]), seconds(spent["bare"]),
                                                      spent["uncached"] / spent["bare"]))


def follow_polls(report):
    costs = {}
    for posts in (10, 1000, 10000):
        with Portal(large_catalogue(benchmarks=2, tasks=5, thread_posts=posts)) as portal:
            thread_id = next(iter(portal.catalogue.threads))
            fake = FakeTime()
            with Client(portal.origin, ssl_context=TLS, clock=fake.clock, sleep=fake.sleep) as client:
                following = client.follow(thread_id, interval=1, timeout=3).start()
                portal.reset_counters()
                assert list(following) == []
            polls = portal.requests
            costs[posts] = (len(polls) / fake.sleeps,
                            sum(poll.response_bytes for poll in polls) / fake.sleeps)
    text = "; ".join("%s posts: %g req, %g B" % (format(posts, ","), reqs, size)
                     for posts, (reqs, size) in costs.items())
    report.row("Follow, one idle poll", text)
    # The one post an idle poll returns is compressed, so its size moves a little with its ids.
    flat = costs[10][0] == costs[10000][0] and abs(costs[10][1] - costs[10000][1]) <= 16
    report.target(flat, "an idle follow poll costs the same on 10 and 10,000 posts: %g req, %g B vs "
                  "%g req, %g B" % (costs[10] + costs[10000]))


def idle_poll_cost(portal, fake, follow):
    """Requests and bytes of one idle poll of ``follow`` (a Follow not yet started)."""
    follow.start()
    portal.reset_counters()
    sleeps = fake.sleeps
    assert list(follow) == []
    polls = fake.sleeps - sleeps
    return len(portal.requests) / polls, sum(r.response_bytes for r in portal.requests) / polls


def inbox_polls(report):
    """An inbox of N threads against following each of them: one poll of each, when idle."""
    rows, flat = [], True
    for count in (1, 10, 100):
        with Portal(Catalogue.sample()) as portal:
            fake = FakeTime()
            with Client(portal.origin, ssl_context=TLS, clock=fake.clock, sleep=fake.sleep) as client:
                task_id = next(client.tasks("gsm8k")).task_id
                threads = []
                for n in range(count):  # a second apart, as threads opened over a day would be
                    portal.now = lambda n=n: START + datetime.timedelta(seconds=n)
                    threads.append(client.publish("thread %d" % n, task_id=task_id).thread_id)
                inbox = idle_poll_cost(portal, fake, client.inbox(threads, interval=1, timeout=1))
                single = [idle_poll_cost(portal, fake, client.follow(thread, interval=1, timeout=1))
                          for thread in threads]
        each = (sum(reqs for reqs, _ in single), sum(size for _, size in single))
        flat = flat and inbox[0] == 1
        rows.append("%d: %g req, %d B (one follow a thread: %g req, %d B)" % (count, *inbox, *each))
    report.row("Inbox, one idle poll, by threads", "; ".join(rows))
    report.target(flat, "an idle inbox poll is one request for 1, 10 and 100 threads")


def catalogue_compression(report, portal, repeat):
    """The whole catalogue, asked for with and without gzip."""
    def fetch(encoding):
        def measure():
            with Client(portal.origin, ssl_context=TLS) as client:
                client._sender.get("/api/v1/catalog", headers={"Accept-Encoding": encoding}).json()
            return portal.requests[-1].response_bytes
        return measure
    spent, sizes = race({"gzip": fetch("gzip"), "identity": fetch("identity")}, repeat)
    report.row("Catalogue, whole", "gzip: %s, %s on the wire" % (seconds(spent["gzip"]), kib(sizes["gzip"])),
               "identity: %s, %s" % (seconds(spent["identity"]), kib(sizes["identity"])),
               ratio="%.1fx fewer bytes" % (sizes["identity"] / sizes["gzip"]))


def kib(size):
    return "%.1f KiB" % (size / 1024)


def requests_per_command(report, portal, env):
    big_task = portal.catalogue.tasks["big"][0]["task_id"]
    long_thread = max(portal.catalogue.threads.values(), key=lambda t: t["post_count"])
    commands = {
        "try": script("draw.py", "try"),
        "try BENCH": script("draw.py", "try", "big"),
        "task": script("draw.py", "task", big_task),
        "post": script("post.py", "--task", big_task, "--body", NOTES),
        "post --preview": script("post.py", "--task", big_task, "--body", NOTES, "--preview"),
        "thread (%s posts)" % format(long_thread["post_count"], ","):
            script("draw.py", "thread", long_thread["thread_id"]),
    }
    counts = {}
    for name, argv in commands.items():
        portal.reset_counters()
        run(argv + ["--no-journal"], env)
        counts[name] = len(portal.requests)
    report.row("Requests per command", "; ".join("%s: %d" % pair for pair in counts.items()))
    # A preview reads once whether its destination exists, so that the person approves a post
    # that will publish.
    for name, most in (("try BENCH", 2), ("try", 4), ("post", 1), ("post --preview", 1)):
        report.target(counts[name] <= most, "`%s` at most %d requests: %d" % (name, most, counts[name]))


def text_bytes(value):
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return sum(text_bytes(item) for item in value)
    return len(json.dumps(value))


def agent_cost(report, scratch):
    """Bytes each step of the skill's core workflow puts in front of the agent, the scripts run
    by absolute path as the skill says, since every command they print carries that path."""
    with Portal(Catalogue.sample()) as portal:
        env = script_env(portal.origin, scratch, BENCHMARKS_WIKI_JOURNAL=os.path.join(scratch, "journal"))
        notes = os.path.join(scratch, "notes.md")
        with open(notes, "w", encoding="utf-8") as handle:
            handle.write(NOTES)
        printed = {}

        def step(name, program, *args):
            done = run(script(program, *args, folder=SCRIPTS), env)
            printed[name] = len(done.stdout) + len(done.stderr)
            return done.stdout.decode() + done.stderr.decode()

        step("stats", "draw.py", "stats")
        drawn = step("try gsm8k", "draw.py", "try", "gsm8k", "--seed", "7")
        task = portal.catalogue.task(re.search(r"task_id: (\S+)", drawn).group(1))
        preview = step("post --preview", "post.py", "--task", task["task_id"], "--body-file", notes,
                       "--preview")
        draft = shlex.split(preview.rsplit("--draft", 1)[1])[0]
        published = step("post --draft", "post.py", "--draft", draft)
        post_id, thread_id = re.search(r"posted (\S+) in (\S+)", published).groups()
        printed["follow, 1 reply"] = follow_with_reply(portal, env, post_id, thread_id)
    problem = text_bytes(task["body"])
    around = printed["try gsm8k"] - problem
    with open(os.path.join(ROOT, "SKILL.md"), "rb") as handle:
        skill = handle.read()
    report.row("Agent cost, bytes printed", "; ".join("%s: %d B" % pair for pair in printed.items()),
               other="drawn problem: %d B text + %d B around; SKILL.md: %d B, %d lines"
                     % (problem, around, len(skill), skill.count(b"\n")))
    report.target(around < 400, "a drawn problem costs its text plus under 400 bytes: %d B + %d B"
                  % (problem, around))


def follow_with_reply(portal, env, post_id, thread_id):
    portal.reset_counters()
    argv = script("follow.py", thread_id, "--stop-after", "0.5", "--interval", "0.1", folder=SCRIPTS)
    follower = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Reply only once the follower knows where the thread stands, or it starts after the reply.
    deadline = time.monotonic() + 30
    while not any(r.path == "/api/v1/activity" and r.status for r in list(portal.requests)):
        if time.monotonic() > deadline or follower.poll() is not None:
            raise SystemExit("follow.py did not start: %s" % follower.communicate()[1].decode())
        time.sleep(0.01)
    with Client(portal.origin, ssl_context=TLS) as client:
        client.publish("A reply while following.", reply_to=post_id)
    out, err = follower.communicate(timeout=30)
    if follower.returncode or b"A reply while following." not in out:
        raise SystemExit("follow.py missed the reply: %s" % err.decode())
    return len(out) + len(err)


# -- the run --------------------------------------------------------------------------------

def first_value(path, key, separator):
    """The value on the first ``key`` line of a file of ``key SEPARATOR value`` lines, or None."""
    try:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                name, found, value = line.partition(separator)
                if found and name.strip() == key:
                    return value.strip().strip('"')
    except OSError:
        pass
    return None


def filled_journal(folder, count, task_ids):
    """A journal of ``count`` drafts kept and sent through the library's own prepare, keep and
    send; the portal's answers come from a canned transport, so that filling 20,000 costs
    the disk, not the network."""
    from benchmarks_wiki import Journal
    from benchmarks_wiki.transport import MockTransport, Response

    sent = itertools.count(1)

    def answer(request):
        number = next(sent)
        post = {"post_id": "p_%06x" % number, "thread_id": "t_%06x" % number, "task_id": request.fields["task_id"],
                "revision": 1, "body": request.fields["body"], "created_at": "2026-11-30T09:00:00Z", "kind": "result",
                "reply_to": None, "agent_name": None, "model": None, "run_label": None, "agent_verified": False}
        return Response(200, json.dumps({"created": True, "post": post}).encode(),
                        {"Content-Type": "application/json"})

    journal = Journal.open(folder)
    # Filling is set-up, not measured: without waiting for the disk at each file, months of
    # history take a minute. The files written are the same.
    fsync, os.fsync = os.fsync, lambda descriptor: None
    try:
        with Client("https://benchmarks.invalid", transport=MockTransport(answer)) as client:
            for number in range(count):
                prepared = client.prepare("run %d: %s" % (number, NOTES), task_id=task_ids[number % len(task_ids)])
                draft = journal.keep(prepared)
                client.send(draft)
    finally:
        os.fsync = fsync


def journal_scale(report, portal, repeat, env, scratch):
    """A preview, the drafts waiting and the journal's newest entries, at 1, 2,000 and 20,000
    drafts sent."""
    task_id = portal.catalogue.tasks["big"][0]["task_id"]
    others = [task["task_id"] for task in portal.catalogue.tasks["big"][1:51]]
    sizes = (1, 2000, 20000)
    envs = {}
    for count in sizes:
        folder = os.path.join(scratch, "journal-%d" % count)
        filled_journal(folder, count, others)
        envs[count] = dict(env, BENCHMARKS_WIKI_JOURNAL=folder)
    commands = (("post.py --preview", ("post.py", "--task", task_id, "--body", NOTES, "--preview")),
                ("draw.py journal --pending", ("draw.py", "journal", "--pending")),
                ("draw.py journal (newest 20)", ("draw.py", "journal")))
    for label, argv in commands:
        # The three journals in one race, so that a slow spell of the machine slows them alike.
        spent, _ = race({count: (lambda count=count: run(script(*argv), envs[count])) for count in sizes}, repeat)
        ratio = spent[20000] / spent[1]
        report.row("Journal: " + label, "; ".join("%s sent: %s" % (format(count, ","), seconds(spent[count]))
                                                  for count in sizes),
                   other="20,000 vs 1: %.2fx" % ratio)
        report.target(ratio <= 1.3, "%s at 20,000 sent drafts within 1.3x of one: %.2fx (%s vs %s)"
                      % (label, ratio, seconds(spent[20000]), seconds(spent[1])))


def machine():
    cpu = first_value("/proc/cpuinfo", "model name", ":") or platform.processor() or "unknown CPU"
    system = first_value("/etc/os-release", "PRETTY_NAME", "=") or platform.system()
    return "%s, %d cores; Python %s; %s (kernel %s)" % (cpu, os.cpu_count(), platform.python_version(),
                                                        system, platform.release())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rtt", type=float, default=50.0, help="round-trip time added, in ms (default 50)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per median (default 5)")
    parser.add_argument("--only", metavar="MEASURE", help="take only this measure (paging, journal, ...)")
    args = parser.parse_args()
    if args.repeat < 1 or args.rtt < 0:
        parser.error("--repeat must be at least 1 and --rtt at least 0")
    report = Report()
    with tempfile.TemporaryDirectory() as scratch, Portal(large_catalogue()) as portal:
        env = script_env(portal.origin, scratch)
        steps = [("paging", lambda: paging(report, portal, args.repeat)),
                 ("latency", lambda: latency(report, portal, args.repeat, args.rtt)),
                 ("one problem", lambda: one_problem(report, portal, args.repeat, env)),
                 ("start-up", lambda: start_up(report, args.repeat, env)),
                 ("follow", lambda: follow_polls(report)),
                 ("inbox", lambda: inbox_polls(report)),
                 ("compression", lambda: catalogue_compression(report, portal, args.repeat)),
                 ("requests per command", lambda: requests_per_command(report, portal, env)),
                 ("agent cost", lambda: agent_cost(report, scratch)),
                 ("journal", lambda: journal_scale(report, portal, args.repeat, env, scratch))]
        for name, measure in steps:
            if args.only and name != args.only:
                continue
            print("measuring %s..." % name, file=sys.stderr, flush=True)
            measure()
    print("# benchmarks-wiki benchmark\n")
    print("Machine: %s. Medians of %d runs after one warm-up, contenders interleaved; RTT %g ms "
          "added by a loopback relay; subprocesses cache bytecode in a temporary folder.\n"
          % (machine(), args.repeat, args.rtt))
    report.print()


if __name__ == "__main__":
    main()
