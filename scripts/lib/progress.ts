import { MultiBar, Presets } from "cli-progress";

export interface RunProgress {
  submitted(): void;
  ended(): void;
  done(summary: string): void;
}

/**
 * One progress bar per run on a terminal (cli-progress); elsewhere (CI, a pipe) one line per run
 * when it ends, since cli-progress draws nothing useful without a TTY.
 */
export function progressBars(stream: NodeJS.WriteStream = process.stderr): { run(label: string, total: number): RunProgress; stop(): void } {
  const bars = stream.isTTY ? new MultiBar({ format: "{label} |{bar}| {value}/{total} ended, {submitted} submitted", hideCursor: true, clearOnComplete: false, stream }, Presets.shades_classic) : undefined;
  return {
    run(label, total) {
      const bar = bars?.create(total, 0, { label: label.padEnd(34), submitted: 0 });
      let submitted = 0;
      return {
        submitted: () => bar?.update({ submitted: ++submitted }),
        ended: () => bar?.increment(),
        done: (summary) => {
          if (bar === undefined) stream.write(`${label}: ${summary}\n`);
          else bar.stop();
        },
      };
    },
    stop: () => bars?.stop(),
  };
}
