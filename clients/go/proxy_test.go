package pgfence_test

import (
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v4"
)

// stallProxy forwards TCP connections to the test server and can stall
// them all: while stalled, it holds every byte, as a network that has gone
// quiet does, and delivers them when it resumes.  It can also hold what
// the server sends only, so that a statement runs and its answer does not
// come back.
type stallProxy struct {
	ln      net.Listener
	network string
	target  string
	mu      sync.Mutex
	cond    *sync.Cond
	stalled bool
	replies bool // the server's bytes only are held
}

func newStallProxy(t *testing.T) *stallProxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{network: "tcp", target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	if filepath.IsAbs(cfg.Host) {
		p.network = "unix"
		p.target = filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	p.cond = sync.NewCond(&p.mu)
	if p.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stall(false)
		p.stallReplies(false)
		p.ln.Close()
	})
	go p.serve()
	return p
}

// dsn: the test server's conninfo, through the proxy.
func (p *stallProxy) dsn(t *testing.T) *pgx.ConnConfig {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	addr := p.ln.Addr().(*net.TCPAddr)
	cfg.Host, cfg.Port, cfg.Fallbacks = "127.0.0.1", uint16(addr.Port), nil
	cfg.TLSConfig = nil
	return cfg
}

func (p *stallProxy) stall(on bool) {
	p.mu.Lock()
	p.stalled = on
	p.mu.Unlock()
	p.cond.Broadcast()
}

// stallReplies holds (on) or delivers what the server sends.
func (p *stallProxy) stallReplies(on bool) {
	p.mu.Lock()
	p.replies = on
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			s, err := net.Dial(p.network, p.target)
			if err != nil {
				c.Close()
				return
			}
			go p.pipe(c, s, false)
			p.pipe(s, c, true)
		}()
	}
}

func (p *stallProxy) pipe(from, to net.Conn, fromServer bool) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.stalled || (fromServer && p.replies) {
				p.cond.Wait()
			}
			p.mu.Unlock()
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
