"""Exactly once on every path: the same command run twice never posts twice."""

import pytest

from tests.conftest import publishes, script_env


@pytest.fixture
def task_id(client, portal):
    task = next(client.tasks("gsm8k")).task_id
    portal.reset_counters()
    return task


@pytest.mark.parametrize("program, words", [("post.py", []), ("benchmarks-wiki", ["post"])])
def test_a_publish_at_once_run_twice_posts_once(run, portal, task_id, program, words):
    command = [*words, "--task", task_id, "--body", "One-shot result: 42."]
    first = run(program, *command)
    assert first.returncode == 0 and first.stdout.startswith("posted p_"), first.stderr
    again = run(program, *command)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("already published ") and "; nothing sent" in again.stdout.splitlines()[0]
    assert first.stdout.split()[1] == again.stdout.split()[2]
    assert portal.published == 1 and len(publishes(portal)) == 1


def test_a_publish_at_once_whose_answer_was_lost_is_one_post_when_run_again(run, portal, task_id):
    command = ["--task", task_id, "--body", "One-shot result: 42.", "--retries", "0"]
    portal.drop_after_record()
    lost = run("post.py", *command)
    assert lost.returncode == 3 and "may or may not be posted" in lost.stderr
    again = run("post.py", *command)
    assert again.returncode == 0 and again.stdout.startswith("already published "), again.stdout + again.stderr
    third = run("post.py", *command)
    assert third.stdout.startswith("already published ") and "nothing sent" in third.stdout
    assert portal.published == 1 and len(publishes(portal)) == 2


def test_the_same_text_under_a_new_key_is_a_second_post(run, portal, task_id):
    command = ["--task", task_id, "--body", "Same words, posted twice on purpose."]
    assert run("post.py", *command).stdout.startswith("posted ")
    assert run("post.py", *command, "--key", "second").stdout.startswith("posted ")
    assert run("post.py", *command, "--key", "second").stdout.startswith("already published ")
    assert portal.published == 2


@pytest.mark.parametrize("change", [["--kind", "note"], ["--name", "bot"], ["--model", "m"], ["--run-label", "r"],
                                    ["--revision", "1"]])
def test_a_post_that_differs_in_any_field_is_another_post(run, portal, task_id, change):
    command = ["--task", task_id, "--body", "Differs in one field."]
    assert run("post.py", *command).stdout.startswith("posted ")
    assert run("post.py", *command, *change).stdout.startswith("posted ")
    assert portal.published == 2


def test_the_same_post_is_the_same_whatever_the_portal_would_normalise(run, portal, task_id):
    assert run("post.py", "--task", task_id, "--body", "Trailing space.  \r\n").stdout.startswith("posted ")
    assert run("post.py", "--task", task_id, "--body", "Trailing space.", "--kind", "result").stdout \
        .startswith("already published ")
    assert portal.published == 1


def test_a_name_from_the_environment_is_part_of_the_post(run, portal, task_id):
    command = ["post.py", "--task", task_id, "--body", "Named by the environment."]
    assert run(*command).stdout.startswith("posted ")
    named = run(*command, env=script_env(portal, BENCHMARKS_WIKI_AGENT_NAME="bot"))
    assert named.stdout.startswith("posted ") and portal.published == 2


def test_a_preview_of_a_post_already_published_says_so(run, portal, task_id):
    command = ["--task", task_id, "--body", "Previewed after it went out."]
    posted = run("post.py", *command)
    preview = run("post.py", *command, "--preview")
    post_id, thread_id = posted.stdout.split()[1], posted.stdout.split()[3]
    assert f"already published as {post_id} in {thread_id}; the same post again needs a --key of its own" \
        in preview.stdout
    assert portal.published == 1


def test_a_nonce_given_sends_that_request_and_the_same_command_again_sends_nothing(run, portal, task_id):
    command = ["--task", task_id, "--body", "With a nonce of my own."]
    assert run("post.py", *command, "--nonce", "A" * 20).stdout.startswith("posted ")
    assert run("post.py", *command, "--nonce", "A" * 20).stdout.startswith("already published ")
    assert [request.params["nonce"] for request in publishes(portal)] == ["A" * 20]


@pytest.mark.parametrize("argv", [["try", "gsm8"], ["benchmark", "gsm8"], ["tasks", "gsm8"]])
def test_an_unknown_benchmark_names_the_nearest_slugs(run, portal, argv):
    done = run("draw.py", *argv)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.endswith("; did you mean gsm8k? see every one with: python3 scripts/draw.py benchmarks\n")
    far = run("draw.py", argv[0], "zzzzzz")
    assert far.returncode == 1 and "did you mean" not in far.stderr
