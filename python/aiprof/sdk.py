"""Recording from Python: the C runtime of include/aiprof/aiprof.h.

    import aiprof

    @aiprof.span("preprocess")            # decorator
    def preprocess(x): ...

    for batch in loader:
        with aiprof.step():               # iteration_start() / iteration_end()
            with aiprof.span("forward"):  # context manager
                model(batch)
            aiprof.counter("queue_depth", len(queue))

    with aiprof.request("infer"):         # or r = aiprof.request("infer"); ...; r.end()
        handle(req)

    r = aiprof.request("generate")        # LLM serving: TTFT, TPOT, ITL per request
    r.prefill(len(prompt))                # prefill starts now
    for tok in decode(): r.token()        # or r.tokens(n) for n at once
    r.end()

Spans, nodes and steps nest per thread (like the C API); a request may end on
another thread. The file (AIPROF_OUTPUT, default aiprof-<pid>.aiprof) is
written at exit and on flush() (a process leaving by os._exit, e.g. a
forked worker, leaves its buffers' spill file instead: docs/sdk.md);
configuration is the C runtime's
(AIPROF_MODE, AIPROF_RING_MB, AIPROF_ENABLE=0, docs/sdk.md). Names are
interned once per distinct string, so building them per call is correct,
but a decorator or a span object made once and reused is cheapest.
"""

import functools
import inspect

from . import _sdk
from . import _framework

# aiprof monitor's deep trace may turn torch.profiler on in this process.
_sdk.set_framework_handler(_framework.handle)

Request = _sdk.Request
counter = _sdk.counter
flush = _sdk.flush
flush_to = _sdk.flush_to
enabled = _sdk.enabled
set_enabled = _sdk.set_enabled
clock_ns = _sdk.clock_ns
output_path = _sdk.output_path
mark = _sdk.mark
thread_name = _sdk.thread_name
iteration_start = _sdk.iteration_start
iteration_end = _sdk.iteration_end


class _Scoped(_sdk.Span):
    """A span (or node) usable as `with` block and as decorator."""

    __slots__ = ("_node",)

    def __init__(self, name, node=False):
        super().__init__(name, node)
        self._node = bool(node)

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            return self._wrap_async(func)
        begin, end = self.begin, self.end

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            begin()
            try:
                return func(*args, **kwargs)
            finally:
                end()
        return wrapper

    def _wrap_generator(self, func):
        """A generator's body runs at each next(), not at the call: one span per resumption
        (the time spent making each item), none while the consumer holds the item. A span
        around the call would time only the creation of the generator (microseconds)."""
        begin, end = self.begin, self.end

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            sent, thrown = None, None
            while True:
                begin()
                try:
                    item = gen.send(sent) if thrown is None else gen.throw(thrown)
                except StopIteration as stop:
                    return stop.value
                finally:
                    end()
                sent, thrown = None, None
                try:
                    sent = yield item
                except GeneratorExit:
                    gen.close()
                    raise
                except BaseException as e:  # thrown in by the consumer: passed on
                    thrown = e
        return wrapper

    def _wrap_async(self, func):
        """Spans nest per thread, and a coroutine's awaits let other tasks run on the same
        thread in between, so a span would end wrongly (and around the call it timed only the
        creation of the coroutine). An async function is timed as a request of this name: a
        request may begin and end anywhere (docs/python.md)."""
        if self._node:
            raise TypeError("aiprof.node cannot decorate an async function (%s): its awaits interleave "
                            "with other tasks; use @aiprof.span (timed as a request) or aiprof.request()"
                            % func.__qualname__)
        if inspect.isasyncgenfunction(func):
            raise TypeError("aiprof.span cannot decorate an async generator (%s); use aiprof.request() "
                            "inside it" % func.__qualname__)
        name = self.name

        @functools.wraps(func)
        async def wrapper(*args, **kwargs):
            with _sdk.Request(name):
                return await func(*args, **kwargs)
        return wrapper


# Span objects hold only their interned name, so one per name serves every
# thread; span() and node() hand out the cached one (names should be a
# bounded set, as the runtime keeps each distinct name until exit).
_spans = {}
_nodes = {}


def span(name):
    """A span named `name` on the calling thread: `with span("x"):` or `@span("x")`.
    `@span` without a name uses the function's qualified name."""
    s = _spans.get(name)
    if s is None:
        if callable(name):
            return span(name.__qualname__)(name)
        s = _spans.setdefault(name, _Scoped(name))
    return s


def node(name):
    """A pipeline node (stage) span, written as "node:<name>" for `aiprof node-bottleneck`;
    `with node("tokenize"):` or `@node("tokenize")`."""
    s = _nodes.get(name)
    if s is None:
        s = _nodes.setdefault(name, _Scoped(name, True))
    return s


_STEP = _sdk.Step()  # holds no state: one serves every thread


def step():
    """One step (iteration_start() ... iteration_end()) as a `with` block."""
    return _STEP


# request(name) begins a request now and returns it; `.end()` it from any
# thread (`.end(error=True)` for a failed one), or use `with request(name):`
# (an exception leaving the block ends it as an error). (The class itself: no extra call.)
request = Request
