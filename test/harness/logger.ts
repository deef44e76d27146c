import type { Logger as N8nLogger, LogMetadata } from 'n8n-workflow';

type Level = 'error' | 'warn' | 'info' | 'debug';

/** Turns log metadata into text without throwing on errors, cycles or BigInts. */
function metadataText(metadata: LogMetadata | undefined): string {
	if (!metadata || Object.keys(metadata).length === 0) return '';
	const seen = new WeakSet<object>();
	try {
		return (
			' ' +
			JSON.stringify(metadata, (_key, value: unknown) => {
				if (typeof value === 'bigint') return value.toString();
				if (value instanceof Error) {
					// Own props (description, context, …) may hold request details worth scanning.
					return { ...value, name: value.name, message: value.message, stack: value.stack };
				}
				if (value !== null && typeof value === 'object') {
					if (seen.has(value)) return '[Circular]';
					seen.add(value);
				}
				return value;
			})
		);
	} catch {
		return ' [unserialisable metadata]';
	}
}

/**
 * A logger for both n8n-workflow's LoggerProxy and n8n-core's DI `Logger`:
 * every line goes into the current sink, so tests can scan what n8n logged (e.g. for secrets).
 */
export class CollectingLogger implements N8nLogger {
	private sink: string[] = [];

	/** Starts collecting into a fresh array and returns it. */
	startRun(): string[] {
		this.sink = [];
		return this.sink;
	}

	scoped(): this {
		return this;
	}

	error(message: string, metadata?: LogMetadata) {
		this.write('error', message, metadata);
	}

	warn(message: string, metadata?: LogMetadata) {
		this.write('warn', message, metadata);
	}

	info(message: string, metadata?: LogMetadata) {
		this.write('info', message, metadata);
	}

	debug(message: string, metadata?: LogMetadata) {
		this.write('debug', message, metadata);
	}

	private write(level: Level, message: string, metadata?: LogMetadata) {
		this.sink.push(`${level}: ${message}${metadataText(metadata)}`);
		if (process.env.HARNESS_LOG === '1') process.stderr.write(`[n8n ${level}] ${message}\n`);
	}
}
