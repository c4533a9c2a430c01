// Package controller wires the image-controller's reconcilers into a manager.
package controller

import (
	"context"
	"net/http"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"

	syncv1 "github.com/kuvryn/kuvryn-sync/apis/v1alpha1"
	"github.com/kuvryn/kuvryn-sync/pkg/eventrecorder"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/scan"
	"github.com/kuvryn/kuvryn-sync/services/image-controller/internal/writeback"
)

// Options are the image-controller's own flags.
type Options struct {
	// WriteBack commits selected images to Git (--image-write-back).
	WriteBack bool
	// RegistryQPS and RegistryBurst limit requests per registry host.
	RegistryQPS   float64
	RegistryBurst int
}

// Setup adds the ImagePolicy and Repository reconcilers to mgr, and a
// readiness check that fails until the manager's caches have synced, so the
// service is not ready before its controllers can run.
func Setup(mgr ctrl.Manager, o Options) error {
	rec, err := eventrecorder.New(mgr, syncv1.FieldManagerImage)
	if err != nil {
		return err
	}
	if err := (&ImagePolicyReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Events: rec,
		Scanner: scan.New(scan.Options{QPS: o.RegistryQPS, Burst: o.RegistryBurst}),
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&RepositoryReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Events: rec,
		Writer: &writeback.Writer{}, WriteBack: o.WriteBack,
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	started := &startedCheck{}
	if err := mgr.Add(started); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("controllers", started.check)
}

// startedCheck is a runnable outside leader election: the manager starts
// such runnables only once its caches have synced. It does not wait for
// leadership, or a rolling update of a single replica could never finish.
type startedCheck struct{ started atomic.Bool }

func (s *startedCheck) Start(ctx context.Context) error {
	s.started.Store(true)
	<-ctx.Done()
	return nil
}

func (s *startedCheck) NeedLeaderElection() bool { return false }

func (s *startedCheck) check(*http.Request) error {
	if !s.started.Load() {
		return errNotStarted
	}
	return nil
}
