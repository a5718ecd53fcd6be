from pathlib import Path

from server.frontends.print_refusals import REFUSED, exit_code, refusal_lines

CWD = Path("/w")


def result(*denials: tuple[str, dict], is_error: bool = False) -> dict:
    return {
        "is_error": is_error,
        "permission_denials": [
            {"tool_name": name, "tool_use_id": f"t{i}", "tool_input": args}
            for i, (name, args) in enumerate(denials)
        ],
    }


def test_exit_code_says_failed_refused_or_fine():
    assert exit_code(result(), output_format="text") == 0
    assert exit_code(result(("Edit", {})), output_format="text") == REFUSED == 3
    assert exit_code(result(("Edit", {}), is_error=True), output_format="text") == 1


def test_json_output_carries_the_refusals_and_keeps_exit_0():
    assert exit_code(result(("Edit", {})), output_format="json") == 0
    assert exit_code(result(("Edit", {})), output_format="stream-json") == 0


def test_each_refusal_says_what_why_and_how_to_allow_it():
    lines = refusal_lines(
        result(
            ("Write", {"file_path": "/w/src/a.py", "content": "x"}),
            ("Bash", {"command": "pytest -q tests\nrm -rf build"}),
            ("WebFetch", {"url": "https://example.com/x"}),
        ),
        cwd=CWD,
        mode=None,
    )
    assert lines == [
        "agentls: refused Write src/a.py: the default permission mode asks before edits and -p "
        "has no one to answer; to allow it, run with --permission-mode acceptEdits or "
        "--allowedTools Write",
        "agentls: refused Bash `pytest -q tests…`: the default permission mode asks before "
        'commands and -p has no one to answer; to allow it, run with --allowedTools "Bash(pytest:*)"',
        "agentls: refused WebFetch `https://example.com/x`: the default permission mode asks "
        "before fetches and -p has no one to answer; to allow it, run with --allowedTools WebFetch",
    ]


def test_an_edit_refused_past_accept_edits_names_the_paths_that_always_ask():
    [line] = refusal_lines(result(("Edit", {"file_path": "/etc/hosts"})), cwd=CWD, mode="acceptEdits")
    assert line == (
        "agentls: refused Edit /etc/hosts: this path always asks for approval (outside the "
        "workspace or a control file); to allow it, run with --permission-mode bypassPermissions "
        "(or answer it in an editor)"
    )
