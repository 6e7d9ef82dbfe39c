// dynalite on 127.0.0.1 and a free port, announced as {"event":"listening","port":N} on stdout
// like the other local-stack servers (dynalite's own cli.js treats `--port 0` as "unset" and
// binds 4567). In-memory store; tables are created and deleted at once (the 500 ms CREATING /
// DELETING states of the default only slow tests down).
'use strict'
const dynalite = require('dynalite')

const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
// Longer than the clients' idle reuse, so a kept-alive connection is never closed under a request
// that is on its way (node's default is 5 s).
server.keepAliveTimeout = 65000
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ event: 'listening', port: server.address().port }))
})
// Exit on the first SIGTERM/SIGINT without waiting for kept-alive client connections.
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0))
