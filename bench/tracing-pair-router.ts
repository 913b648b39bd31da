// The tracing benchmark's front Worker: the two Workers it compares run as auxiliary Workers of one `wrangler dev`
// (one workerd process, an isolate each), and this one hands each request to the one its `x-bench-worker` header
// names (`a` or `b`), through a service binding: both ways take the same hop.

/** A service binding, as much of it as this uses (Node's types do not have it). */
interface Service {
  fetch(request: Request): Promise<Response>;
}

interface PairEnv {
  A: Service;
  B: Service;
}

export default {
  fetch(request: Request, env: PairEnv): Promise<Response> {
    return (request.headers.get("x-bench-worker") === "b" ? env.B : env.A).fetch(request);
  },
};
