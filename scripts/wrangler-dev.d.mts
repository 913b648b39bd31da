// Types of scripts/wrangler-dev.mjs, for the benchmarks that start Workers as `npm start` does.
export declare const LOCAL_DEV_VARS: Readonly<Record<string, string>>;
export declare const LOCAL_DEV_ARGS: readonly string[];
export declare function runWranglerDev(args: readonly string[]): void;
