"""The check a generated answer must pass to be shown as an answer from the documents."""

from __future__ import annotations

from bench.claims import passage as hit
from knowledge.answering.citations import attribute, check_answer, claims, says_it_does_not_know, supported

CONFIG = hit("MAX_COOKIE_SIZE: Warn if cookie headers are larger than this many bytes. Defaults to ``4093``.")
PORTS = hit(
    "When another program already uses the port, use ``flask run --port 5001`` to pick a different port.", 2
)


def test_cited_supported_claims_pass() -> None:
    text = "Flask warns when a cookie header is larger than `MAX_COOKIE_SIZE`, 4093 bytes by default [1].\n\nHere is how:"
    assert check_answer(text, [CONFIG, PORTS]).ok
    assert check_answer("Pass `--port 5001` to flask run [2].", [CONFIG, PORTS]).ok


def test_a_claim_without_a_citation_fails() -> None:
    check = check_answer("Flask warns when cookie headers are larger than 4093 bytes.", [CONFIG])
    assert check.problems == ["no citation: Flask warns when cookie headers are larger than 4093 bytes."]


def test_a_citation_beyond_the_sources_fails() -> None:
    check = check_answer("Cookie headers over 4093 bytes make Flask warn [9].", [CONFIG, PORTS])
    assert check.problems and check.problems[0].startswith("cites [9] of 2 sources")


def test_a_claim_its_source_does_not_hold_fails() -> None:
    claim = "Flask rejects cookies over 8 kilobytes with a 431 status code [1]."
    assert not check_answer(claim, [CONFIG]).ok
    assert not supported("Set SESSION_COOKIE_SAMESITE to Lax", [CONFIG])


def test_general_knowledge_must_say_so_and_only_where_allowed() -> None:
    text = "Browsers also cap cookies at about 4 KB per cookie (general knowledge)."
    assert check_answer(text, [CONFIG], general_allowed=True).ok
    assert not check_answer(text, [CONFIG]).ok


def test_code_must_come_from_the_sources() -> None:
    good = "Run it on another port [2]:\n\n```\nflask run --port 5001\n```"
    bad = "Run it like this [2]:\n\n```\ngunicorn --bind 0.0.0.0:5001 wsgi_module:application\n```"
    assert check_answer(good, [CONFIG, PORTS]).ok
    assert not check_answer(bad, [CONFIG, PORTS]).ok


def test_i_dont_know_is_recognised() -> None:
    assert says_it_does_not_know("I don't know.") and says_it_does_not_know(
        "I do not know from these sources."
    )
    assert not says_it_does_not_know("I know: pass --port [1].")


def test_a_sentence_may_rest_on_the_citation_closing_its_paragraph() -> None:
    cited_once = (
        "Another program already uses the port. Use flask run --port 5001 to pick a different port [2]."
    )
    assert check_answer(cited_once, [CONFIG, PORTS]).ok
    invented = (
        "The default port is blocked by macOS AirPlay on every Mac. Use flask run --port 5001 instead [2]."
    )
    assert check_answer(invented, [CONFIG, PORTS]).problems == [
        "not in the cited source: The default port is blocked by macOS AirPlay on every Mac."
    ]
    separate = (
        "Another program already uses the port.\n\nUse flask run --port 5001 to pick a different port [2]."
    )
    assert not check_answer(separate, [CONFIG, PORTS]).ok, "a citation does not reach across paragraphs"


def test_an_uncited_claim_is_given_the_source_that_supports_it() -> None:
    reply = (
        "Here is what I found:\n\n"
        "Flask warns when cookie headers are larger than 4093 bytes.\n"
        "When another program already uses the port, run flask run --port 5001 instead.\n\n"
        "- Pick a different port with `--port`"
    )
    attributed = attribute(reply, [CONFIG, PORTS])
    assert attributed == (
        "Here is what I found:\n\n"
        "Flask warns when cookie headers are larger than 4093 bytes. [1]\n"
        "When another program already uses the port, run flask run --port 5001 instead. [2]\n\n"
        "- Pick a different port with `--port` [2]"
    )
    assert check_answer(attributed, [CONFIG, PORTS]).ok


def test_attribution_leaves_what_no_source_supports_and_what_is_cited() -> None:
    invented = "Flask rejects cookies over 8 kilobytes with a 431 status code."
    assert attribute(invented, [CONFIG, PORTS]) == invented
    assert not check_answer(attribute(invented, [CONFIG, PORTS]), [CONFIG, PORTS]).ok
    cited = "Another program already uses the port. Use flask run --port 5001 to pick a different port [2]."
    assert attribute(cited, [CONFIG, PORTS]) == cited, "the first sentence rests on its paragraph's [2]"
    general = "Browsers also cap cookies at about 4 KB per cookie (general knowledge)."
    assert attribute(general, [CONFIG], general_allowed=True) == general
    code = "```\nflask run --port 5001\n```"
    assert attribute(code, [PORTS]) == code, "code is checked for its names, never cited"


def test_attribution_picks_the_source_holding_most_of_the_claim() -> None:
    both = hit("Cookie headers can be large. Flask warns about large cookie headers over 4093 bytes.", 2)
    claim = "Flask warns when cookie headers are larger than 4093 bytes."
    assert (
        attribute(claim, [hit("Cookie headers are sent by browsers when larger bytes flow.", 1), both])
        == f"{claim} [2]"
    )
    assert attribute(claim, [both, hit(both.text, 3)]) == f"{claim} [1]", "a tie goes to the better-ranked"


def test_a_citation_after_the_full_stop_belongs_to_its_sentence() -> None:
    text = (
        "Flask warns when cookie headers are larger than 4093 bytes. [1] When another program "
        "already uses the port, run flask run --port 5001 instead. [2]"
    )
    assert [u.text for u in claims(text)] == [
        "Flask warns when cookie headers are larger than 4093 bytes. [1]",
        "When another program already uses the port, run flask run --port 5001 instead. [2]",
    ]
    assert check_answer(text, [CONFIG, PORTS]).ok
    assert not check_answer(text.replace("[1]", "[2]", 1), [CONFIG, PORTS]).ok


def test_a_name_or_figure_its_source_does_not_hold_is_not_supported() -> None:
    wrong_figure = "Flask warns when cookie headers are larger than 8192 bytes by default [1]."
    invented_name = "Flask warns when cookie headers exceed `MAX_HEADER_BYTES` bytes by default [1]."
    for claim in (wrong_figure, invented_name):
        problems = check_answer(claim, [CONFIG]).problems
        assert len(problems) == 1 and problems[0].startswith("not in the cited source: Flask warns"), (
            "most of its words are in the source, but not the fact it states"
        )
        assert attribute(claim.replace(" [1]", ""), [CONFIG]) == claim.replace(" [1]", "")
    assert check_answer(
        "Flask warns when cookie headers are larger than 4093 bytes by default [1].", [CONFIG]
    ).ok
    assert check_answer("Pick another port with `--port 5001`, e.g. flask run [2].", [CONFIG, PORTS]).ok


def test_names_and_figures_the_question_gives_need_no_source() -> None:
    claim = "Flask warns about `session_cookie` values when cookie headers are larger than 4093 bytes [1]."
    assert not check_answer(claim, [CONFIG]).ok
    assert check_answer(claim, [CONFIG], asked="why does flask warn about our session_cookie?").ok
    numbered = (
        "1. Flask warns when cookie headers are larger than 4093 bytes [1].\n2. It warns by default [1]."
    )
    assert check_answer(numbered, [CONFIG]).ok, "a list's numbers are no figures"
    spelled = hit("Rollbacks switch the load balancer back, which takes about two minutes.")
    assert check_answer("Rolling back the load balancer takes about 2 minutes [1].", [spelled]).ok
    assert check_answer("A well-known rule: rollbacks switch the load balancer back [1].", [spelled]).ok


def test_an_acronym_must_be_in_what_the_model_was_shown() -> None:
    claim = "Flask warns when JWT cookie headers are larger than 4093 bytes [1]."
    assert not check_answer(claim, [CONFIG, PORTS]).ok
    with_it = hit("Tokens such as a JWT travel in headers too.", 3)
    assert check_answer(claim, [CONFIG, PORTS, with_it]).ok, "a topic word, not a fact of [1]'s"


def test_an_answer_must_rest_on_a_cited_source_somewhere() -> None:
    assert check_answer("Yes.", [CONFIG]).problems == ["nothing in it rests on a cited source: Yes."]
    assert not check_answer("Yes, it does [1].", [CONFIG]).ok, (
        "too short to check, so nothing is seen to hold"
    )
    assert check_answer("Defaults to 4093 bytes [1].", [CONFIG]).ok, "short, and all of it in [1]"
    assert not check_answer("Defaults to 8192 bytes [1].", [CONFIG]).ok
    assert not check_answer("Cookies are fine [1].", [CONFIG]).ok
    general = "Yes, browsers cap cookies too (general knowledge)."
    assert check_answer(general, [CONFIG], general_allowed=True).ok
    assert not check_answer(general, [CONFIG]).ok


def test_words_in_capitals_that_name_nothing_need_no_source() -> None:
    assert check_answer("OK: Flask warns when cookie headers are larger than 4093 bytes [1].", [CONFIG]).ok


DEBUGGER = hit(
    "The interactive debugger allows executing arbitrary Python code from the browser. "
    "It is not safe to use on a production machine.",
    3,
)


def test_a_claim_that_says_the_opposite_of_its_source_fails() -> None:
    flipped = "The interactive debugger does not allow executing arbitrary Python code from the browser [1]."
    dropped = "The interactive debugger is safe to use on a production machine [1]."
    for claim in (flipped, dropped):
        problems = check_answer(claim, [DEBUGGER]).problems
        assert len(problems) == 1 and problems[0].startswith(
            "says the opposite of the cited source: The inter"
        ), "it holds every word of a sentence of [1] but for a 'not'"
        assert attribute(claim.replace(" [1]", ""), [DEBUGGER]) == claim.replace(" [1]", "")
    assert not supported(
        "The debugger isn't able to execute arbitrary Python code from the browser", [DEBUGGER]
    )


def test_a_claim_that_agrees_with_its_source_passes_however_it_denies() -> None:
    agreeing = [
        "The interactive debugger allows executing arbitrary Python code from the browser [1].",
        "The interactive debugger isn't safe to use on a production machine [1].",
        "Never use the interactive debugger on a production machine: it is not safe [1].",
        "Don't enable it in production, since it allows executing arbitrary Python code from the browser [1].",
    ]
    for claim in agreeing:
        assert check_answer(claim, [DEBUGGER]).ok, claim
    either = hit(
        "Do not use the development server in production. Use the development server while developing."
    )
    assert check_answer(
        "The development server is for use while developing, not in production [1].", [either]
    ).ok
    assert check_answer("Use the development server while developing [1].", [either]).ok, (
        "a sentence of the source says it as the claim does"
    )
    uploads = hit(
        'Just make sure not to forget to set the ``enctype="multipart/form-data"`` attribute on your '
        "HTML form, otherwise the browser will not transmit your files at all."
    )
    positive = 'Set the enctype="multipart/form-data" attribute on your HTML form so the browser transmits your files [1].'
    assert check_answer(positive, [uploads]).ok, "two denials may say either; the claim is left to its words"
    keys = hit("Currently, Requests does not support using encrypted keys.")
    assert check_answer("Encrypted keys are currently unsupported by Requests [1].", [keys]).ok
    assert not check_answer("Requests currently supports using encrypted keys [1].", [keys]).ok
    restarts = hit("Sessions don't persist across restarts unless you set a secret key.")
    assert check_answer("Sessions persist across restarts if you set a secret key [1].", [restarts]).ok
    tasks = hit("A background task will run only once the response has been sent.")
    assert check_answer("A background task doesn't run until the response has been sent [1].", [tasks]).ok, (
        "'only' and 'until' restrict: either side may say it with a denial or without"
    )


def test_a_claim_that_swaps_a_word_for_its_opposite_fails() -> None:
    csrf = hit(
        "CSRF protection is enabled by default for every form, and requests without a token are rejected."
    )
    for claim in (
        "CSRF protection is disabled by default for every form [1].",
        "With CSRF protection, requests without a token are accepted [1].",
    ):
        problems = check_answer(claim, [csrf]).problems
        assert len(problems) == 1 and problems[0].startswith("says the opposite of the cited source"), claim
    for claim in (
        "CSRF protection is enabled by default for every form [1].",
        "CSRF protection is on by default for every form, and requests without a token are rejected [1].",
        "Requests without a token are not accepted, since CSRF protection is enabled by default [1].",
    ):
        assert check_answer(claim, [csrf]).ok, "the 'without' of another clause; a denial and an opposite"
    hooks = hit("The before_request functions are called before the view function runs.")
    assert not check_answer(
        "The before_request functions are called after the view function runs [1].", [hooks]
    ).ok
    assert check_answer(
        "The view function runs after the before_request functions are called [1].", [hooks]
    ).ok, "a converse with its neighbours swapped may say the same"
    both = hit("The limit is enabled for uploads and disabled for downloads.")
    assert check_answer("The limit is disabled for downloads and enabled for uploads [1].", [both]).ok


def test_a_command_line_option_must_be_in_its_source() -> None:
    debug = hit(
        "Use flask run --debug to enable the reloader and debugger. Pass --no-debugger to keep the reloader."
    )
    invented = "Start the server with flask run --reload to enable the reloader and debugger [1]."
    assert check_answer(invented, [debug]).problems[0].startswith("not in the cited source: Start the server")
    assert check_answer(invented.replace("--reload", "--debug"), [debug]).ok
    assert check_answer("Pass --no-debugger to keep the reloader on its own [1].", [debug]).ok
    assert not check_answer("Pass --no-reload to keep the debugger on its own [1].", [debug]).ok
    assert check_answer(invented, [debug], asked="what does flask run --reload do?").ok, "the asker named it"


def test_a_quantity_s_unit_must_be_in_its_source() -> None:
    rollback = hit("Rollbacks switch the load balancer back, which takes about two minutes.")
    assert check_answer("A rollback takes about 2 minutes [1].", [rollback]).ok
    assert check_answer("A rollback takes about two min [1].", [rollback]).ok, "another way to write it"
    for quantity in ("2 hours", "2 seconds", "2 ms", "2h", "two days"):
        claim = f"Rolling back the load balancer takes about {quantity} [1]."
        assert check_answer(claim, [rollback]).problems[0].startswith("not in the cited source"), quantity
    assert not check_answer("Flask warns when cookie headers are larger than 4093 KB [1].", [CONFIG]).ok
    decades = "Since the 1990s, the ones who roll back switch the load balancer back [1]."
    assert check_answer(
        decades, [hit("Since the 1990s we roll back by switching the load balancer back.")]
    ).ok, "no quantities"
    assert check_answer("Flask warns when cookie headers are larger than 4093 bytes [1].", [CONFIG]).ok
    assert check_answer(
        "Rolling back the load balancer takes about 2 hours [1].", [rollback], asked="does it take 2 hours?"
    ).ok, "the asker's unit"


def test_a_keyword_argument_must_be_in_the_sources() -> None:
    timeout = hit(
        "Tell Requests to stop waiting for a response after a given number of seconds with the timeout "
        'parameter:\n\n    requests.get("https://github.com/", timeout=0.001)\n'
    )
    lead = "Stop waiting after a given number of seconds with the timeout parameter [1]:\n\n"
    real = 'requests.get("https://github.com/", timeout=0.001)'
    assert check_answer(f"{lead}```python\n{real}\n```", [timeout]).ok
    invented = real.replace(")", ", retries=True)")
    problems = check_answer(f"{lead}```python\n{invented}\n```", [timeout]).problems
    assert problems == [f"a code block the sources do not hold: ```python {invented} ```"]
    own_names = 'wait = 0.001\nrequests.get("https://github.com/", timeout=wait)'
    assert check_answer(f"{lead}```python\n{own_names}\n```", [timeout]).ok, "the reader's own variables"
    defined = f"def fetch(url, wait=0.001):\n    return {real.replace('0.001', 'wait')}"
    assert check_answer(f"{lead}```python\n{defined}\n```", [timeout]).ok, "a function the model defines"
    prose = "Pass `{}` to requests.get to stop waiting after a given number of seconds [1]."
    assert check_answer(prose.format("timeout=0.001"), [timeout]).ok
    assert not check_answer(prose.format("retries=True"), [timeout]).ok
