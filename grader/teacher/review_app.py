"""The review page: `grade review GRADES --serve`, a batch reviewed in a browser, by submission or by mistake.

A local web app on 127.0.0.1 only. Starlette gives the routing, the forms, the cookies and the check of the Host
header (a page of another site that renames itself 127.0.0.1 by DNS gets nothing); uvicorn serves it on a socket
bound here, so the address is known before the first request. Pages come from the autoescaping templates of
grader/report/templates/review/ (review_view.py computes what they show).

Who may use it: the browser that opened the printed address (its token: secrets.token_urlsafe, new at each
start). Browsers send a cookie of 127.0.0.1 to every port of it, and another local user's server may be one of them:
a cookie alone must not open a page. So the first visit with `?token=` is sent to a secret path (`/k/<key>/...`,
new at each start, never printed) and given a cookie (a value new at each start, HttpOnly, SameSite=Strict, for that
path only); every request needs both. The path is sent to this origin only (links are followed with no Referer to
another origin, and the page loads nothing from one), so what another port receives (at most the cookie, which the
browser sends under the secret path only) opens nothing here; an address seen on the screen opens nothing without
the cookie. A POST also needs, from a browser, an Origin of this server. Every response forbids inline code, framing
and outside requests (CSP), and is not cached.

A review is written as `grade review` writes it (review.add_reviews, with who and when), under the grades folder's
lock (review.locked), and answered at once; the batch's outputs are written again in a thread of the page's
(`Outputs`), as after `grade review`, before the page stops. Pages read the batch through review_view.load, which
reads again only the files that changed.

Runs in: the `grade review --serve` process. No torch.
"""

from __future__ import annotations

import math
import secrets
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

from grader.course.exercises import Exercise
from grader.teacher.review import ReviewError, add_item, add_reviews, locked, score_problem
from grader.teacher.review_view import NotFound, class_page, load, mistake_page, submission_page, words
from grader.text import LANGUAGES, Text, message_of

HOSTS = ("127.0.0.1", "localhost")
STATIC = Path(__file__).resolve().parent.parent / "report" / "static"
MAX_COMMENT = 20_000  # characters
POLICY = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
          "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "Cache-Control": "no-store"}
INSTALL = Text("the review page needs Starlette and uvicorn: pip install 'torch-katas[review]'",
               "复核页面需要 Starlette 和 uvicorn：pip install 'torch-katas[review]'")


class Outputs:
    """The batch's outputs written again after the page's reviews, in a thread of their own: a review is answered once
    review.toml holds it, and the gradebook, grades.csv and the feedback follow (one rebuild for all the reviews
    saved meanwhile, under the grades folder's lock); `flush` waits for them (the page's end)."""

    def __init__(self, out: Path):
        self.out, self.pending, self.busy = out, False, False
        self.changed = threading.Condition()
        threading.Thread(target=self.run, daemon=True).start()

    def want(self) -> None:
        with self.changed:
            self.pending = True
            self.changed.notify_all()

    def run(self) -> None:
        from grader.teacher.gradebook import rebuild

        while True:
            with self.changed:
                while not self.pending:
                    self.changed.wait()
                self.pending, self.busy = False, True
            try:
                with locked(self.out):
                    rebuild(self.out)
            except (ReviewError, OSError) as exc:  # said, and tried again at the next review
                print(message_of(exc).render("en"), file=sys.stderr)
            finally:
                with self.changed:
                    self.busy = False
                    self.changed.notify_all()

    def flush(self) -> None:
        with self.changed:
            while self.pending or self.busy:
                self.changed.wait()


class MissingExtra(ImportError):
    """Starlette, uvicorn, python-multipart or Pygments is not installed."""


class BadInput(ValueError):
    """A review form that cannot be written as it is (its message says why, in one line)."""


def require() -> None:
    """MissingExtra, with the line that installs them, where the review extra is not installed."""
    try:
        import multipart  # noqa: F401 - Starlette's forms
        import pygments  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise MissingExtra(INSTALL) from None


def review_fields(form, exercise: Exercise, items: list[str]) -> dict:
    """The review of `exercise` a form asks for, as add_review's fields; BadInput for a value `grade review` would
    refuse. `items`: the names of the exercise's rubric items."""
    checks = {d["id"] for d in exercise.declared_checks()}  # a parametrised check's id is `name[param]`
    fields: dict = {"checks": {}}
    applied = [str(name) for name in form.getlist("item") if name]
    unknown = [name for name in applied if name not in items]
    if unknown:
        raise BadInput(Text("{ex} has no rubric item {item}", "{ex} 没有评分项 {item}", ex=exercise.id,
                            item=", ".join(unknown)))
    if applied:
        fields["items"] = applied
    score = str(form.get("score") or "").strip()
    if score:
        try:
            fields["score"] = float(score)
        except ValueError:
            raise BadInput(Text("the score is a number, not {value}", "分数必须是数字，而不是 {value}",
                                value=score)) from None
        why = score_problem(fields["score"], exercise, bool(form.get("bonus")))
        if why:
            raise BadInput(why)
        if form.get("bonus"):
            fields["bonus"] = True
    for name, verdict in form.multi_items():
        if name.startswith("check:") and verdict:
            cid = name.removeprefix("check:")
            if verdict not in ("passed", "failed") or cid.split("[")[0] not in checks:
                raise BadInput(Text("no check {check} that can be set to {verdict}",
                                    "没有可以改为 {verdict} 的检查 {check}", check=cid, verdict=verdict))
            fields["checks"][cid] = verdict
    for name in ("comment", "file"):
        value = str(form.get(name) or "").strip()
        if len(value) > MAX_COMMENT:
            raise BadInput(Text("the {field} is longer than {n} characters", "{field} 超过了 {n} 个字符", field=name,
                                n=MAX_COMMENT))
        if value:
            fields[name] = value
    if len(fields) == 1 and not fields["checks"]:
        raise BadInput(Text("say what to review: a score, a check, a rubric item, a comment or a file",
                            "请说明要复核什么：分数、检查、评分项、评语或文件"))
    return fields


def local_path(value, fallback: str = "/") -> str:
    """A path of this server to go back to (never another site's address)."""
    value = str(value or "")
    return value if value.startswith("/") and not value.startswith("//") and "\\" not in value else fallback


def create_app(out: Path, token: str, port: int, lang: str = "en", by: str | None = None):
    """The review page of the batch in `out`, for requests holding `token`, served on 127.0.0.1:`port`."""
    from secrets import compare_digest

    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.middleware.base import BaseHTTPMiddleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Mount, Route

    from grader.report.pages import STYLE, render

    root = f"/k/{secrets.token_urlsafe(32)}"  # the secret path: sent to this origin only
    cookie, session = f"torch-katas-review-{port}", secrets.token_urlsafe(32)  # cookies do not tell ports apart
    origins = {f"http://{host}:{port}" for host in HOSTS}
    outputs = Outputs(out)

    def holds(value: str | None, secret: str) -> bool:
        return value is not None and compare_digest(value.encode(), secret.encode())

    def under_root(path: str) -> bool:
        return holds(path[:len(root)], root) and path[len(root):len(root) + 1] in ("", "/")

    def lang_of(request) -> str:
        chosen = request.cookies.get("lang")
        return chosen if chosen in LANGUAGES else lang

    def here(request) -> str:
        """This page's path and query, without the note of what was just saved."""
        query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "saved"])
        return request.url.path + (f"?{query}" if query else "")

    def page(request, template: str, content: dict, status: int = 200) -> HTMLResponse:
        chosen = lang_of(request)
        saved = request.query_params.get("saved", "")
        note = Text("Saved: {n} review(s), with who and when, in review.toml; the gradebook follows in a moment.",
                    "已保存 {n} 条复核（含复核人和时间）到 review.toml；成绩册随即重新生成。", n=saved)
        return HTMLResponse(render(template, lang=chosen, page=content, words=words(chosen), root=root,
                                   here=here(request), saved=note.render(chosen) if saved.isdigit() else ""), status)

    def problem(request, exc: Exception, status: int) -> HTMLResponse:
        message = message_of(exc).render(lang_of(request))
        return page(request, "review/error.html.j2", {"title": str(status), "message": message}, status)

    def shown(build):
        """A GET handler: the page `build(request, batch)` computes, or what went wrong, in one line."""
        def handler(request):
            try:
                try:  # without the lock: the outputs written again after a review hold it, and need not be waited for
                    batch = load(out, lang_of(request))
                except ReviewError:  # review.toml caught while being written (or not readable): once it is written
                    with locked(out):
                        batch = load(out, lang_of(request))
                return build(request, batch)
            except NotFound as exc:
                return problem(request, exc, 404)
            except ReviewError as exc:
                return problem(request, exc, 409)
        return handler

    def group_query(request) -> dict:
        return {k: request.query_params[k] for k in ("exercise", "key", "check") if k in request.query_params}

    def submission(request, batch):
        group = group_query(request)
        return page(request, "review/submission.html.j2", submission_page(
            batch, request.path_params["student"], request.path_params["exercise"], group or None))

    def write(students: list[str], exercise: str, form) -> int:
        with locked(out):
            batch = load(out, lang)
            ex = batch.exercise(exercise)
            fields = review_fields(form, ex, [item["name"] for item in batch.rubric(ex.id)])
            for student in students:
                batch.row(student)
            # of the file graded now, as `grade review` writes it
            add_reviews(out, [(student, ex.id, {**fields, "sha256": graded.sha256 if graded else None})
                              for student in students for graded in [batch.graded.get((student, ex.id))]], by)
        outputs.want()
        return len(students)

    async def save(request):
        form = await request.form()
        students = [str(s) for s in form.getlist("student")]
        back = local_path(form.get("next"), root + "/")
        if not students:
            return problem(request, BadInput(Text("select at least one submission", "请至少选中一份提交")), 400)
        return await written(request, back, write, students, str(form.get("exercise", "")), form)

    async def written(request, back: str, work, *args):
        """Run `work(*args)` (a write that returns how many entries it made) off the event loop; back to `back`
        saying how many, or the problem: bad input (400), a page that is not there (404), a review.toml that does
        not read (409)."""
        try:
            n = await run_in_threadpool(work, *args)
        except BadInput as exc:
            return problem(request, exc, 400)
        except NotFound as exc:
            return problem(request, exc, 404)
        except ReviewError as exc:
            return problem(request, exc, 409)
        return RedirectResponse(back + ("&" if "?" in back else "?") + f"saved={n}", 303)

    def define(exercise: str, form) -> int:
        name, text = str(form.get("name") or "").strip(), str(form.get("text") or "").strip()
        try:
            points = float(str(form.get("points") or ""))
        except ValueError:
            points = math.nan
        if not name or not math.isfinite(points) or len(name) > 100 or len(text) > MAX_COMMENT:
            raise BadInput(Text("a rubric item needs a name and its points (a number: -2, 1)",
                                "评分项需要名称和分数（一个数：-2、1）"))
        with locked(out):
            ex = load(out, lang).exercise(exercise)
            add_item(out, ex.id, name, points, text, by)
        outputs.want()
        return 1

    async def item(request):
        form = await request.form()
        return await written(request, local_path(form.get("next"), root + "/"), define,
                             str(form.get("exercise", "")), form)

    def choose_lang(request):
        response = RedirectResponse(local_path(request.query_params.get("next"), root + "/"), 303)
        if request.path_params["lang"] in LANGUAGES:
            response.set_cookie("lang", request.path_params["lang"], path=root, httponly=True, samesite="strict")
        return response

    def style(request):
        return Response(STYLE + "\n" + (STATIC / "review.css").read_text(encoding="utf-8"), media_type="text/css")

    def same_origin(request) -> bool:
        """A POST from this server's own page (a client that says nothing of where it comes from is no browser)."""
        origin, site = request.headers.get("origin"), request.headers.get("sec-fetch-site")
        return (origin is None or origin in origins) and site in (None, "same-origin")

    async def guard(request, call_next):
        given, path = request.query_params.get("token"), request.url.path
        if given is not None and holds(given, token) and request.method == "GET" and not under_root(path):
            query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
            response: Response = RedirectResponse(root + path + (f"?{query}" if query else ""), 303)
            response.set_cookie(cookie, session, path=root, httponly=True, samesite="strict")
        elif not under_root(path) or not holds(request.cookies.get(cookie), session):
            response = PlainTextResponse("403: open the address `grade review --serve` printed, with its token.", 403)
        elif request.method == "POST" and not same_origin(request):
            response = PlainTextResponse("403: a review is written from this server's own pages only.", 403)
        else:
            response = await call_next(request)
        response.headers.update(POLICY)
        return response

    routes = [Route("/", shown(lambda request, batch: page(request, "review/class.html.j2", class_page(batch)))),
              Route("/s/{student}/{exercise}", shown(submission)),
              Route("/mistake", shown(lambda request, batch: page(request, "review/mistake.html.j2",
                                                                 mistake_page(batch, group_query(request))))),
              Route("/review", save, methods=["POST"]),
              Route("/item", item, methods=["POST"]),
              Route("/lang/{lang}", choose_lang),
              Route("/static/review.css", style),
              Route("/static/review.js", lambda request: FileResponse(STATIC / "review.js",
                                                                      media_type="text/javascript"))]
    app = Starlette(routes=[Mount(root, routes=routes)],
                    middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(HOSTS)),
                                Middleware(BaseHTTPMiddleware, dispatch=guard)])
    app.state.outputs = outputs
    return app


def serve(out: Path, port: int = 0, lang: str = "en", by: str | None = None, announce=print) -> None:
    """Serve the review page of `out` on 127.0.0.1:`port` (0: a free one) until Ctrl-C; `announce` is given the
    address to open, token included, once the socket listens. ReviewError (no batch, a review.toml that does not
    read) and OSError (the port is taken) before anything is served."""
    require()
    import uvicorn

    load(out, lang)  # the batch reads: said now, in one line, rather than on the first page
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((HOSTS[0], port))
    listener.listen(64)
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(32)
    app = create_app(out, token, port, lang, by)
    announce(f"http://{HOSTS[0]}:{port}/?token={token}")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")  # no log line holds the token
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        app.state.outputs.flush()  # the reviews saved last are in every output before the page stops
