/*
 * transport.h - the controller's SSH connections: an opaque struct
 * host_conn and its verbs.
 *
 * The one header the rest of the controller includes for SSH; the verbs
 * live in controller/ssh/ (session.h: open, close, deadlines; channel.h:
 * one command at a time; sshargs.h: the inventory's ssh
 * options; startups.h: handshakes in flight per hop), the only place that
 * sees libssh.  Every blocking step is bounded by its own timeout and by the
 * deadline of the whole host (--timeout: fixed when the host's job
 * starts, never moved by progress), through one timer thread for all
 * connections.  A timed-out connection is unusable afterwards.
 */
#ifndef ENVCTL_CONTROLLER_TRANSPORT_H
#define ENVCTL_CONTROLLER_TRANSPORT_H

#include "controller/ssh/channel.h"
#include "controller/ssh/session.h"
#include "controller/ssh/sshargs.h"
#include "controller/ssh/startups.h"

#endif
