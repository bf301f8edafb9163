/** What the server wrote into the page: the operator's name and the self-care switches it turned on. */
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content ?? '';

export const operatorName = meta('operator');
const features = new Set(meta('features').split(' ').filter(Boolean));
/** `featureOn('payments')` is the setting `self_care_payments` (the API refuses what is off anyway). */
export const featureOn = (name) => features.has(name);
