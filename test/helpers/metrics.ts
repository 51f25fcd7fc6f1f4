/**
 * A gateway's own counters, read from its Prometheus registry in process:
 * summed over the series whose labels match.
 */
import type { App } from '../../src/server/app.js';

export async function counter(app: App, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric(name)?.get();
  return (metric?.values ?? []).filter((v) => Object.entries(labels).every(([label, value]) => v.labels[label] === value)).reduce((sum, v) => sum + v.value, 0);
}
