/**
 * k8s/ and deploy/ checked against the Kubernetes schemas (npm `kubernetes-models`, generated from
 * the Kubernetes OpenAPI) and against the code: every image is a Dockerfile target, every
 * environment variable is one the code reads, every port a probe, Service or Ingress names exists,
 * every selector matches a Deployment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { Namespace, ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { LIVENESS_PATH } from '../../services/gateway/readiness';

const root = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are arbitrary YAML, checked field by field below */
type Manifest = Record<string, any>;

const MODELS: Record<string, { new (data: any): { validate(): void } }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/Ingress': Ingress,
};

const UNITS = ['gateway', 'billing', 'subscribers', 'network-access', 'pdf-renderer', 'notifier'];
/** Our images, by the Dockerfile target that builds each. */
const IMAGE_TARGETS: Record<string, string> = { 'isp-billing': 'service', 'isp-billing-pdf': 'pdf-renderer' };
const version = JSON.parse(read('package.json')).version as string;

const manifestFiles = fs.readdirSync(path.join(root, 'k8s')).filter((f) => f.endsWith('.yaml'));
const manifests: (Manifest & { file: string })[] = manifestFiles.flatMap((file) =>
  parseAllDocuments(read(`k8s/${file}`)).map((doc) => {
    expect(doc.errors).toEqual([]);
    return { ...(doc.toJS() as Manifest), file };
  }),
);
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const named = (kind: string, name: string) => ofKind(kind).find((m) => m.metadata.name === name);

/** Every variable the code reads from the environment (shared/config.ts and the units' options). */
function variablesReadByCode(): Set<string> {
  const found = new Set<string>();
  const pattern = /\benv\.([A-Z][A-Z0-9_]+)|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]|intVar\(env, '([A-Z][A-Z0-9_]+)'/g;
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) return walk(p);
      return /\.(ts|mjs)$/.test(e.name) ? [p] : [];
    });
  const files = [
    ...['runtime', 'services', 'shared', 'scripts'].flatMap((d) => walk(path.join(root, d))),
    path.join(root, 'server.ts'),
    path.join(root, 'moleculer.config.ts'),
  ];
  for (const file of files)
    for (const m of fs.readFileSync(file, 'utf8').matchAll(pattern)) found.add(m[1] ?? m[2] ?? m[3]);
  return found;
}
const KNOWN_VARIABLES = variablesReadByCode();
/** The README's configuration table: every variable a manifest sets must be documented there. */
const DOCUMENTED = new Set([...read('README.md').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));

const containersOf = (m: Manifest): Manifest[] => m.spec.template.spec.containers;
const envOf = (c: Manifest): Record<string, string> =>
  Object.fromEntries((c.env ?? []).map((e: Manifest) => [e.name, e.value]));
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe('every manifest', () => {
  it.each(manifests.map((m) => [`${m.file}: ${m.kind} ${m.metadata?.name}`, m] as const))(
    '%s is valid against the Kubernetes schema',
    (_, m) => {
      const Model = MODELS[`${m.apiVersion}/${m.kind}`];
      expect(Model).toBeDefined();
      const { file: _file, ...doc } = m;
      void _file;
      expect(() => new Model(doc).validate()).not.toThrow();
    },
  );

  it('is checked by a validator that refuses a wrong manifest', () => {
    const { file: _file, ...d } = structuredClone(named('Deployment', 'gateway')!);
    void _file;
    d.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new MODELS['apps/v1/Deployment'](d).validate()).toThrow(/containerPort/);
  });

  it('lives in the one Namespace the folder declares', () => {
    const [ns] = ofKind('Namespace');
    expect(ns.metadata.name).toBe('isp-billing');
    for (const m of manifests.filter((x) => x.kind !== 'Namespace'))
      expect(`${m.kind}/${m.metadata.name}: ${m.metadata.namespace}`).toBe(`${m.kind}/${m.metadata.name}: isp-billing`);
  });

  it('has the pieces the distributed mode needs', () => {
    expect(ofKind('ConfigMap')).toHaveLength(1);
    expect(ofKind('Secret')).toHaveLength(1);
    expect(named('Deployment', 'nats')).toBeDefined();
    expect(named('Service', 'nats')).toBeDefined();
    expect(ofKind('Job').map((j) => j.spec.template.spec.containers[0].command)).toEqual([
      ['node', 'dist/scripts/migrate.js'],
    ]);
    expect(ofKind('Ingress').length).toBeGreaterThan(0);
    expect(
      ofKind('HorizontalPodAutoscaler')
        .map((h) => h.spec.scaleTargetRef.name)
        .sort(),
    ).toEqual(['network-access', 'pdf-renderer']);
    for (const h of ofKind('HorizontalPodAutoscaler'))
      expect(named('Deployment', h.spec.scaleTargetRef.name)).toBeDefined();
  });
});

describe('one Deployment per unit', () => {
  const unitDeployments = ofKind('Deployment').filter((d) => d.metadata.name !== 'nats');

  it('runs each of the six units once, by SERVICES', () => {
    const units = unitDeployments.map((d) => envOf(containersOf(d)[0]).SERVICES).sort();
    expect(units).toEqual([...UNITS].sort());
    for (const d of unitDeployments) expect(envOf(containersOf(d)[0]).SERVICES).toBe(d.metadata.name);
  });

  it.each(UNITS)('%s: probes, resources, a Service and a PodDisruptionBudget that select it', (unit) => {
    const d = named('Deployment', unit)!;
    const labels = d.spec.template.metadata.labels;
    expect(matches(d.spec.selector.matchLabels, labels)).toBe(true);
    for (const c of containersOf(d)) {
      expect(c.resources.requests.cpu).toBeDefined();
      expect(c.resources.requests.memory).toBeDefined();
      const ports = new Map<string | number, number>(
        (c.ports ?? []).flatMap((p: Manifest) => [
          [p.name, p.containerPort],
          [p.containerPort, p.containerPort],
        ]),
      );
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        expect(c[probe]?.httpGet).toBeDefined();
        expect(ports.has(c[probe].httpGet.port)).toBe(true);
      }
      expect(c.readinessProbe.httpGet.path).toBe('/health');
      expect(c.livenessProbe.httpGet.path).toBe(LIVENESS_PATH);
      const env = envOf(c);
      // The port the process listens on is the one the pod declares.
      const probePort = ports.get(c.readinessProbe.httpGet.port);
      expect(String(probePort)).toBe(unit === 'gateway' ? env.PORT : env.OPS_PORT);
      if (unit === 'gateway') expect(String(ports.get('ops'))).toBe(env.OPS_PORT);
    }
    const services = ofKind('Service').filter((s) => matches(s.spec.selector, labels));
    expect(services.map((s) => s.metadata.name)).toEqual([unit]);
    const containerPortNames = new Set(containersOf(d).flatMap((c) => (c.ports ?? []).map((p: Manifest) => p.name)));
    for (const p of services[0].spec.ports) expect(containerPortNames.has(p.targetPort)).toBe(true);
    expect(ofKind('PodDisruptionBudget').filter((p) => matches(p.spec.selector.matchLabels, labels))).toHaveLength(1);
    // The grace period leaves room for the drain (runtime/shutdown.ts: 15 s HTTP + 10 s broker).
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
  });

  it('gives pdf-renderer the image with Chromium and every other unit the one without', () => {
    for (const d of unitDeployments) {
      const image = containersOf(d)[0].image as string;
      expect(image).toBe(d.metadata.name === 'pdf-renderer' ? `isp-billing-pdf:${version}` : `isp-billing:${version}`);
    }
  });
});

describe('images, variables and ports are consistent with the code', () => {
  const dockerfile = read('deploy/Dockerfile');
  const targets = new Set([...dockerfile.matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim)].map((m) => m[1]));
  const podSpecs = [...ofKind('Deployment'), ...ofKind('Job')].map((m) => m.spec.template.spec as Manifest);
  const containers = podSpecs.flatMap((s) => s.containers as Manifest[]);

  it('builds every image of ours from a Dockerfile target, and pins every other image', () => {
    for (const c of containers) {
      const [name, tag] = (c.image as string).split(':');
      if (IMAGE_TARGETS[name]) {
        expect(targets.has(IMAGE_TARGETS[name])).toBe(true);
        expect(tag).toBe(version);
      } else {
        expect(tag).toBeTruthy();
        expect(tag).not.toBe('latest');
      }
    }
  });

  it('sets only variables the code reads, and documents each in the README', () => {
    const [configMap] = ofKind('ConfigMap');
    const [secret] = ofKind('Secret');
    const names = [
      ...Object.keys(configMap.data),
      ...Object.keys(secret.stringData),
      ...containers
        .filter((c) => IMAGE_TARGETS[(c.image as string).split(':')[0]])
        .flatMap((c) => Object.keys(envOf(c))),
    ];
    for (const name of names) {
      expect(`${name}: ${KNOWN_VARIABLES.has(name)}`).toBe(`${name}: true`);
      expect(`${name}: ${DOCUMENTED.has(name)}`).toBe(`${name}: true`);
    }
  });

  it('gives every app container the ConfigMap and Secret, which hold what distributed mode requires', () => {
    const [configMap] = ofKind('ConfigMap');
    const [secret] = ofKind('Secret');
    for (const key of ['DATABASE_URL', 'JWT_SECRET', 'ENCRYPTION_KEY']) expect(secret.stringData[key]).toBeTruthy();
    expect(configMap.data.TRANSPORTER).toBe(`nats://nats:${named('Service', 'nats')!.spec.ports[0].port}`);
    for (const c of containers.filter((x) => IMAGE_TARGETS[(x.image as string).split(':')[0]])) {
      const refs = (c.envFrom ?? []).map((e: Manifest) => e.configMapRef?.name ?? e.secretRef?.name);
      expect(refs).toContain(secret.metadata.name);
      if (c.name !== 'migrate') expect(refs).toContain(configMap.metadata.name);
    }
  });

  it('routes the Ingresses to a port the gateway Service has', () => {
    const gatewayPorts = new Set(named('Service', 'gateway')!.spec.ports.map((p: Manifest) => p.name));
    for (const ingress of ofKind('Ingress')) {
      for (const rule of ingress.spec.rules) {
        for (const p of rule.http.paths) {
          expect(named('Service', p.backend.service.name)).toBeDefined();
          expect(gatewayPorts.has(p.backend.service.port.name)).toBe(true);
        }
      }
    }
    const limited = ofKind('Ingress').find((i) => i.metadata.annotations?.['nginx.ingress.kubernetes.io/limit-rpm']);
    expect(limited?.metadata.annotations['nginx.ingress.kubernetes.io/limit-rpm']).toBe('30');
    expect(limited?.spec.rules[0].http.paths.map((p: Manifest) => p.path)).toEqual(['/api/invoices/public/']);
  });
});

describe('deploy/: Dockerfile, compose file and nginx', () => {
  const dockerfile = read('deploy/Dockerfile');
  const compose = parse(read('deploy/docker-compose.yml'), { merge: true }) as Manifest;
  const stage = (name: string) => {
    const start = dockerfile.search(new RegExp(`^FROM\\s+\\S+\\s+AS\\s+${name}\\s*$`, 'm'));
    const next = dockerfile.slice(start + 1).search(/^FROM\s/m);
    return dockerfile.slice(start, next < 0 ? undefined : start + 1 + next);
  };

  it('builds from a clean clone with npm install (npm ci fails on this lock)', () => {
    expect(dockerfile).toMatch(/RUN npm install\b/);
    expect(dockerfile).not.toMatch(/^RUN .*npm ci\b/m);
  });

  it('puts Chromium and Arabic-capable fonts in the pdf-renderer image only', () => {
    expect(stage('pdf-renderer')).toMatch(/chromium/);
    expect(stage('pdf-renderer')).toMatch(/fonts-noto-core/);
    for (const other of ['runtime', 'service']) expect(stage(other)).not.toMatch(/chromium/);
    expect(stage('service')).toMatch(/^FROM runtime AS service/m);
  });

  it('runs the six units, NATS, PostgreSQL, FreeRADIUS and nginx, each unit with its own SERVICES', () => {
    const services = compose.services as Record<string, Manifest>;
    for (const s of ['postgres', 'nats', 'freeradius', 'nginx']) expect(services[s]).toBeDefined();
    for (const unit of UNITS) expect(services[unit]?.environment?.SERVICES).toBe(unit);
    for (const [name, s] of Object.entries(services)) {
      if (s.build) expect(`${name}: ${targets(s.build.target)}`).toBe(`${name}: true`);
      for (const key of Object.keys(s.environment ?? {})) {
        // The database servers (and the ha profile's etcd and Patroni nodes) take their own variables.
        if (['postgres', 'nginx'].includes(name) || s.profiles?.includes('ha')) continue;
        expect(`${name} ${key}: ${KNOWN_VARIABLES.has(key)}`).toBe(`${name} ${key}: true`);
      }
    }
    expect(services['pdf-renderer'].build.target).toBe('pdf-renderer');
    expect(services.gateway.build.target).toBe('service');
  });

  function targets(name: string): boolean {
    return new RegExp(`^FROM\\s+\\S+\\s+AS\\s+${name}\\s*$`, 'm').test(dockerfile);
  }

  it('points nginx at the gateway port and mounts a file that exists', () => {
    const services = compose.services as Record<string, Manifest>;
    const conf = read('deploy/nginx/nginx.conf');
    expect(conf).toContain(`server gateway:${services.gateway.environment.PORT};`);
    expect(services.gateway.environment.TRUST_PROXY).toBe('true');
    for (const volume of services.nginx.volumes as string[])
      expect(fs.existsSync(path.join(root, 'deploy', volume.split(':')[0]))).toBe(true);
  });
});
