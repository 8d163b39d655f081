/*
 * layers.h - what decides a worker's values besides the managed file: the
 * services that launch it, NCCL's own config files, the environment of
 * workers already running (docs/worker-env.md).
 *
 * layers_request() asks the agent's "layers" op for the playbook's
 * services and process patterns; layers_parse() turns its reply into
 * findings, one line each, judged against a host's desired values and its
 * file's last change.  A finding that makes the host drift (a desired
 * value a launcher shadows, a worker that must be restarted) has drift
 * set; the rest are warnings.  Secret values are masked.  The struct owns
 * its memory; release it with layers_release().
 */
#ifndef ENVCTL_CONTROLLER_LAYERS_H
#define ENVCTL_CONTROLLER_LAYERS_H

#include <jansson.h>
#include <stddef.h>

struct desired;
struct host;
struct host_state;
struct playbook;

/* What a finding means for the host. */
#define ENVCTL_LAYER_WARNING	0	/* shown; not drift */
#define ENVCTL_LAYER_DRIFT	1	/* the host is not as desired */
#define ENVCTL_LAYER_INFO	2	/* facts only: where a value comes
					   from */

struct layer_finding {
	char		*text;
	int		 kind;		/* ENVCTL_LAYER_* */
};

struct layers {
	int		 read;		/* a reply was parsed */
	struct layer_finding *f;
	size_t		 n;
	size_t		 ndrift;
	size_t		 stale;		/* workers to restart */
	size_t		 workers;	/* matching workers seen */
};

/*
 * {"op":"layers",...} for host h (NULL: the playbook's services only) and
 * its desired values d; the inventory's envctl_services win over the
 * playbook's services:.  A new reference.
 */
json_t	*layers_request(const struct playbook *pb, const struct host *h,
	    const struct desired *d, json_int_t id);
/*
 * Fills ly from the agent's reply (ok:true or not: an error is one
 * warning) for a host whose desired values are d, under pb's policy,
 * whose managed file st changed last at st->mtime (st NULL: unknown), and
 * whose managed interpreters are the n paths in interps (a service that
 * runs another is named).  Anything malformed is a warning naming the
 * field, never a crash.
 */
void	layers_parse(struct layers *ly, const json_t *reply,
	    const struct playbook *pb, const struct desired *d,
	    const struct host_state *st, const char *const *interps,
	    size_t n);
/* {"findings":[{"text","kind":"drift|warning|info"}],"stale_workers":n,
 * "workers":n}. */
json_t	*layers_json(const struct layers *ly);
void	layers_release(struct layers *ly);

#endif
