package receiver

import (
	"net/http"
	"strconv"
)

// result names one answer of the receiver. Its label (see label) is the
// value of the result label, one of the guide's nine, exactly.
type result string

const (
	resultAccepted           result = "accepted"
	resultIgnored            result = "ignored"
	resultPing               result = "ping"
	resultUnauthorized       result = "unauthorized"
	resultRateLimited        result = "rate_limited"
	resultTooLarge           result = "too_large"
	resultBadRequest         result = "bad_request"
	resultRepositoryMismatch result = "repository_mismatch"
	resultError              result = "error"
	// resultTooManyPreviews refuses a new preview request on a Repository
	// already holding MaxPreviewRequests.
	resultTooManyPreviews result = "too_many_previews"
)

// results are the label values, each exported from the start at zero.
var results = []result{resultAccepted, resultIgnored, resultPing, resultUnauthorized, resultRateLimited,
	resultTooLarge, resultBadRequest, resultRepositoryMismatch, resultError}

// label is the value of the result label: the guide lists nine, so a
// preview request refused at the cap counts as bad_request, and its body
// says why.
func (r result) label() result {
	if r == resultTooManyPreviews {
		return resultBadRequest
	}
	return r
}

// responses are the status and body of each result. A body never depends
// on the request, so that one 401 is byte for byte every other 401.
var responses = map[result]struct {
	status int
	body   string
}{
	resultAccepted:           {http.StatusAccepted, "accepted\n"},
	resultIgnored:            {http.StatusOK, "ignored: not an event that asks for a fetch or a scan\n"},
	resultPing:               {http.StatusOK, "pong\n"},
	resultUnauthorized:       {http.StatusUnauthorized, "unauthorized\n"},
	resultRateLimited:        {http.StatusTooManyRequests, "too many requests\n"},
	resultTooLarge:           {http.StatusRequestEntityTooLarge, "request body larger than 1 MB\n"},
	resultBadRequest:         {http.StatusBadRequest, "bad request\n"},
	resultRepositoryMismatch: {http.StatusUnprocessableEntity, "repository_mismatch: the push names none of the Repository's spec.git.url\n"},
	resultError:              {http.StatusInternalServerError, "internal error\n"},
	resultTooManyPreviews:    {http.StatusUnprocessableEntity, "too_many_previews: the Repository already holds " + strconv.Itoa(MaxPreviewRequests) + " preview requests\n"},
}

// respond writes res's status and body and counts it.
func (rc *Receiver) respond(w http.ResponseWriter, res result) {
	rc.respondStatus(w, responses[res].status, res)
}

// respondStatus writes status with res's body and counts res.
func (rc *Receiver) respondStatus(w http.ResponseWriter, status int, res result) {
	rc.requests.WithLabelValues(string(res.label())).Inc()
	h := w.Header()
	body := responses[res].body
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	switch res {
	case resultUnauthorized:
		// No Date either: two 401s a second apart stay identical.
		h["Date"] = nil
	case resultRateLimited:
		h.Set("Retry-After", "1")
	case resultTooLarge:
		// The rest of the body is not read, not even by net/http.
		h.Set("Connection", "close")
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
