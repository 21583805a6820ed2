// libpq, PostgreSQL's client library (Debian's libpq-dev): the shared ledger's connection.
#include <libpq-fe.h>
