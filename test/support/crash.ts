/** Crash injection for tests of pure code on in-memory stores: a process dying after a call. */

export class InjectedCrash extends Error {
  override readonly name: string = "InjectedCrash";
}

/**
 * What a crashing proxy counts: calls so far, the call to crash right after (0: none), and with
 * `dies`, a process that is dead from then on: every later call fails before it does anything.
 */
export interface CrashControl {
  calls: number;
  crashAt: number;
  dies?: boolean;
  dead?: boolean;
}

/** Counts the calls made through `target`'s methods and throws right after the `crashAt`-th. */
export function crashing<T extends object>(target: T, control: CrashControl): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (control.dead) throw new InjectedCrash("the process is dead");
        const result = value.apply(object, args);
        const check = () => {
          if (control.dead) throw new InjectedCrash("the process is dead");
          if (++control.calls === control.crashAt) {
            control.dead = control.dies;
            throw new InjectedCrash(`after call ${control.calls}`);
          }
        };
        if (result && typeof (result as Promise<unknown>).then === "function") {
          return (result as Promise<unknown>).then((resolved) => {
            check();
            return resolved;
          });
        }
        if (
          result &&
          typeof (result as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function"
        ) {
          // An iteration counts once it is exhausted: a crash then loses what it read.
          return (async function* () {
            yield* result as AsyncIterable<unknown>;
            check();
          })();
        }
        check();
        return result;
      };
    },
  });
}
